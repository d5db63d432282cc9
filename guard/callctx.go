package guard

import (
	"context"
	"sync"
	"time"
)

// callCtx is the context a tool runs with inline: its parent plus the
// call's deadline. Unlike context.WithDeadline it arms no timer and
// allocates no channel until the tool asks for Done, so a tool that never
// selects on its context costs one small allocation. A tool that does (an
// HTTP client, a database driver) gets a real deadline context from then on.
//
// The deadline is on the guard's clock, now, which Err reads; once armed,
// a runtime timer waits out what remained of it on that clock.
//
// Err and Deadline answer without arming anything; context.Cause reports the
// parent's cause until the deadline context exists.
type callCtx struct {
	context.Context // the parent
	deadline        time.Time
	now             func() time.Time

	mu       sync.Mutex
	armed    *armedCtx // made on first Done
	released bool      // the call returned: c is canceled, as after WithDeadline's cancel
}

// armedCtx is a callCtx's deadline context: the parent with the time left
// until the deadline. It is kept apart so that a callCtx that is never
// armed stays in a smaller allocation.
type armedCtx struct {
	context.Context
	cancel context.CancelFunc
}

func newCallCtx(parent context.Context, deadline time.Time, now func() time.Time) *callCtx {
	return &callCtx{Context: parent, deadline: deadline, now: now}
}

// arm returns the deadline context, making it on first use.
func (c *callCtx) arm() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.armed == nil {
		ctx, cancel := context.WithTimeout(c.Context, c.deadline.Sub(c.now()))
		c.armed = &armedCtx{ctx, cancel}
		if c.released {
			cancel()
		}
	}
	return c.armed.Context
}

func (c *callCtx) loadArmed() (*armedCtx, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.armed, c.released
}

// Deadline returns the earlier of the call's and the parent's deadlines.
func (c *callCtx) Deadline() (time.Time, bool) {
	if d, ok := c.Context.Deadline(); ok && d.Before(c.deadline) {
		return d, true
	}
	return c.deadline, true
}

// Done arms the deadline and returns its channel.
func (c *callCtx) Done() <-chan struct{} { return c.arm().Done() }

// Err reports the parent's error, context.DeadlineExceeded once the call's
// deadline has passed, or context.Canceled once the call returned.
func (c *callCtx) Err() error {
	a, released := c.loadArmed()
	if a != nil {
		return a.Err()
	}
	if err := c.Context.Err(); err != nil {
		return err
	}
	if !c.now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	if released {
		return context.Canceled
	}
	return nil
}

// Value looks key up in the deadline context once it exists, so that the
// context package finds its cancellation state; otherwise in the parent.
func (c *callCtx) Value(key any) any {
	if a, _ := c.loadArmed(); a != nil {
		return a.Value(key)
	}
	return c.Context.Value(key)
}

// AfterFunc lets contexts derived from c propagate cancellation without a
// goroutine (the context package looks for this method).
func (c *callCtx) AfterFunc(f func()) func() bool { return context.AfterFunc(c.arm(), f) }

// release cancels c when the call returns, stopping the deadline's timer
// if it was armed: a tool that kept c sees it done.
func (c *callCtx) release() {
	c.mu.Lock()
	c.released = true
	a := c.armed
	c.mu.Unlock()
	if a != nil {
		a.cancel()
	}
}
