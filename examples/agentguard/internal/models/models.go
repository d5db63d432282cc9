// Package models turns an example's -model flag into an llms.Model: the
// scripted stand-in by default, so every example runs offline, or a real
// provider through langchaingo's own clients.
//
//	-model ""               the example's scripted model (offline, deterministic)
//	-model openai:gpt-4o    OpenAI, or any OpenAI-compatible server: OPENAI_API_KEY, OPENAI_BASE_URL
//	-model ollama:qwen2.5   a local Ollama server: OLLAMA_HOST (default http://localhost:11434)
package models

import (
	"fmt"
	"os"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
)

// FlagHelp documents the -model flag.
const FlagHelp = `model to run: "" for the offline scripted model, "openai:NAME" (OPENAI_API_KEY, OPENAI_BASE_URL) or "ollama:NAME" (OLLAMA_HOST)`

// Open returns the model named by spec, or scripted when spec is empty.
func Open(spec string, scripted llms.Model) (llms.Model, error) {
	if spec == "" {
		return scripted, nil
	}
	provider, name, ok := strings.Cut(spec, ":")
	if !ok || name == "" {
		return nil, fmt.Errorf("models: -model %q: want PROVIDER:NAME, e.g. openai:gpt-4o", spec)
	}
	switch provider {
	case "openai":
		opts := []openai.Option{openai.WithModel(name)}
		if u := os.Getenv("OPENAI_BASE_URL"); u != "" {
			opts = append(opts, openai.WithBaseURL(u))
		}
		m, err := openai.New(opts...)
		if err != nil {
			return nil, fmt.Errorf("models: openai: %w", err)
		}
		return m, nil
	case "ollama":
		opts := []ollama.Option{ollama.WithModel(name)}
		if u := os.Getenv("OLLAMA_HOST"); u != "" {
			if !strings.Contains(u, "://") {
				u = "http://" + u
			}
			opts = append(opts, ollama.WithServerURL(u))
		}
		m, err := ollama.New(opts...)
		if err != nil {
			return nil, fmt.Errorf("models: ollama: %w", err)
		}
		return m, nil
	}
	return nil, fmt.Errorf("models: -model %q: unknown provider %q (want openai or ollama)", spec, provider)
}
