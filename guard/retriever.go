package guard

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentguard/agentguard/trace"
	"github.com/tmc/langchaingo/schema"
)

// WrapRetriever returns a schema.Retriever that records each query as a
// retrieval step — document ids and similarity scores (Document.Score) —
// so that the similarity and grounding gates can judge the answer built on
// it. A document's id is its Metadata "id" (or "doc_id", "source"), else
// its position. It works with any vectorstores.ToRetriever result.
func (g *Guard) WrapRetriever(r schema.Retriever) schema.Retriever {
	return &guardedRetriever{g: g, r: r}
}

type guardedRetriever struct {
	g *Guard
	r schema.Retriever
}

func (w *guardedRetriever) GetRelevantDocuments(ctx context.Context, query string) ([]schema.Document, error) {
	rec := w.g.recorder(ctx)
	s := &trace.Step{Kind: trace.KindRetrieval, Name: "retriever", Args: query, Start: w.g.now()}
	sctx := w.g.stepStarted(ctx, s)
	docs, err := w.r.GetRelevantDocuments(sctx, query)
	s.Duration = w.g.now().Sub(s.Start)
	if err != nil {
		s.Error = err.Error()
	}
	type recorded struct {
		ID    string  `json:"id"`
		Score float64 `json:"score"`
		Text  string  `json:"text"`
	}
	out := make([]recorded, len(docs))
	for i, d := range docs {
		id := ""
		for _, k := range []string{"id", "doc_id", "source"} {
			if v, ok := d.Metadata[k]; ok {
				id = fmt.Sprint(v)
				break
			}
		}
		if id == "" {
			id = fmt.Sprintf("doc-%d", i)
		}
		out[i] = recorded{ID: id, Score: float64(d.Score), Text: d.PageContent}
		s.DocIDs = append(s.DocIDs, id)
		s.Scores = append(s.Scores, float64(d.Score))
	}
	b, _ := json.Marshal(out)
	s.Result = string(b)
	w.g.commitObserved(ctx, sctx, rec, s, nil)
	return docs, err
}
