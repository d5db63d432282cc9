package guard

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

func TestCallCtx(t *testing.T) {
	type key struct{}
	tests := []struct {
		name string
		run  func(t *testing.T, parent context.Context, cancelParent context.CancelFunc)
	}{
		{"no deadline yet", func(t *testing.T, parent context.Context, _ context.CancelFunc) {
			c := newCallCtx(parent, time.Now().Add(time.Hour), time.Now)
			if err := c.Err(); err != nil {
				t.Errorf("Err = %v, want nil", err)
			}
			if got := c.Value(key{}); got != "v" {
				t.Errorf("Value = %v, want the parent's", got)
			}
		}},
		{"deadline passed, never armed", func(t *testing.T, parent context.Context, _ context.CancelFunc) {
			c := newCallCtx(parent, time.Now().Add(-time.Millisecond), time.Now)
			if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Err = %v, want DeadlineExceeded", err)
			}
		}},
		{"deadline fires Done", func(t *testing.T, parent context.Context, _ context.CancelFunc) {
			c := newCallCtx(parent, time.Now().Add(5*time.Millisecond), time.Now)
			<-c.Done()
			if err := c.Err(); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Err = %v, want DeadlineExceeded", err)
			}
			if got := c.Value(key{}); got != "v" {
				t.Errorf("Value after arming = %v, want the parent's", got)
			}
		}},
		{"parent cancel reaches Done", func(t *testing.T, parent context.Context, cancel context.CancelFunc) {
			c := newCallCtx(parent, time.Now().Add(time.Hour), time.Now)
			done := c.Done()
			cancel()
			<-done
			if err := c.Err(); !errors.Is(err, context.Canceled) {
				t.Errorf("Err = %v, want Canceled", err)
			}
		}},
		{"parent cancel seen by Err unarmed", func(t *testing.T, parent context.Context, cancel context.CancelFunc) {
			c := newCallCtx(parent, time.Now().Add(time.Hour), time.Now)
			cancel()
			if err := c.Err(); !errors.Is(err, context.Canceled) {
				t.Errorf("Err = %v, want Canceled", err)
			}
		}},
		{"derived context is canceled with it", func(t *testing.T, parent context.Context, cancel context.CancelFunc) {
			c := newCallCtx(parent, time.Now().Add(time.Hour), time.Now)
			child, stop := context.WithCancel(c)
			defer stop()
			cancel()
			select {
			case <-child.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("a context derived from the call's never ended")
			}
		}},
		{"earlier parent deadline wins", func(t *testing.T, parent context.Context, _ context.CancelFunc) {
			early := time.Now().Add(time.Minute)
			p, stop := context.WithDeadline(parent, early)
			defer stop()
			c := newCallCtx(p, time.Now().Add(time.Hour), time.Now)
			if d, ok := c.Deadline(); !ok || !d.Equal(early) {
				t.Errorf("Deadline = %v, %v; want %v", d, ok, early)
			}
			c2 := newCallCtx(p, early.Add(-time.Second), time.Now)
			if d, _ := c2.Deadline(); !d.Equal(early.Add(-time.Second)) {
				t.Errorf("Deadline = %v, want the call's", d)
			}
		}},
		{"released call is canceled, armed or not", func(t *testing.T, parent context.Context, _ context.CancelFunc) {
			unarmed := newCallCtx(parent, time.Now().Add(time.Hour), time.Now)
			unarmed.release()
			if err := unarmed.Err(); !errors.Is(err, context.Canceled) {
				t.Errorf("Err after release = %v, want Canceled", err)
			}
			<-unarmed.Done() // armed after release: already done
			armed := newCallCtx(parent, time.Now().Add(time.Hour), time.Now)
			done := armed.Done()
			armed.release()
			<-done
		}},
		{"deadline on the given clock", func(t *testing.T, parent context.Context, _ context.CancelFunc) {
			at := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC) // a clock that stands still, far from time.Now
			clock := func() time.Time { return at }
			if err := newCallCtx(parent, at.Add(-time.Millisecond), clock).Err(); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("Err past the deadline = %v, want DeadlineExceeded", err)
			}
			c := newCallCtx(parent, at.Add(5*time.Millisecond), clock)
			if err := c.Err(); err != nil {
				t.Errorf("Err before the deadline = %v, want nil", err)
			}
			select { // armed, a timer waits out the 5ms the clock has left
			case <-c.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("Done never fired")
			}
		}},
		{"context.AfterFunc runs on the deadline", func(t *testing.T, parent context.Context, _ context.CancelFunc) {
			c := newCallCtx(parent, time.Now().Add(5*time.Millisecond), time.Now)
			ran := make(chan struct{})
			context.AfterFunc(c, func() { close(ran) })
			select {
			case <-ran:
			case <-time.After(5 * time.Second):
				t.Fatal("AfterFunc never ran")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// In a bubble, deadlines pass on its fake clock, at once.
			synctest.Test(t, func(t *testing.T) {
				parent, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
				defer cancel()
				tt.run(t, parent, cancel)
			})
		})
	}
}
