package evaluatecmd

import (
	"fmt"
	"iter"
	"runtime"
	"sync"

	"github.com/agentguard/agentguard/guard"
	"github.com/agentguard/agentguard/trace"
)

// judged is a trace with its report.
type judged struct {
	trace  *trace.Trace
	report guard.Report
}

// judge is how a trace is judged, and parallelism how many traces are
// judged at once: one per CPU the Go runtime may use (GOMAXPROCS, which
// follows the container's CPU limit). Tests and benchmarks replace them.
var (
	judge       = (*guard.Guard).Evaluate
	parallelism = func() int { return runtime.GOMAXPROCS(0) }
)

// evaluate is judge(g, t), with a panic turned into the trace's error: a
// rule that fails on one input costs that trace, not the traces after it.
func evaluate(g *guard.Guard, t *trace.Trace) (rep guard.Report, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("agentguard evaluate: trace %q: evaluation failed: %v", t.ID, r)
		}
	}()
	return judge(g, t), nil
}

// evaluated yields the traces of traces with their reports, and the errors
// of traces that could not be read or judged, in the order traces yields
// them. Up to workers traces are judged at once while the next ones are
// read: the output of a file of many traces is the sequential one, sooner.
// At most 3×workers traces are held at any time, and stopping early waits
// only for the traces being judged and the read under way.
func evaluated(traces iter.Seq2[*trace.Trace, error], g *guard.Guard, workers int) iter.Seq2[judged, error] {
	if workers <= 1 {
		return func(yield func(judged, error) bool) {
			for t, err := range traces {
				var rep guard.Report
				if err == nil {
					rep, err = evaluate(g, t)
				}
				if !yield(judged{t, rep}, err) {
					return
				}
			}
		}
	}
	type pending struct {
		judged
		err  error
		done chan struct{} // closed when report or err is set
	}
	return func(yield func(judged, error) bool) {
		inOrder := make(chan *pending, 2*workers) // what the reader read, for yield
		work := make(chan *pending)               // what it read, for the workers
		stop := make(chan struct{})               // yield returned false
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for p := range work {
					p.report, p.err = evaluate(g, p.trace)
					close(p.done)
				}
			})
		}
		go func() {
			defer close(inOrder)
			defer close(work)
			for t, err := range traces {
				p := &pending{judged: judged{trace: t}, err: err, done: make(chan struct{})}
				if err != nil {
					close(p.done)
				}
				select {
				case inOrder <- p:
				case <-stop:
					return
				}
				if err == nil {
					select {
					case work <- p:
					case <-stop:
						return
					}
				}
			}
		}()
		defer func() {
			close(stop)
			wg.Wait() // the workers end when the reader closes work: it is done reading too
		}()
		for p := range inOrder {
			<-p.done
			if !yield(p.judged, p.err) {
				return
			}
		}
	}
}
