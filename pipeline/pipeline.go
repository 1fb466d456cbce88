package pipeline

// A pipeline as built by Run: one goroutine for the source, one driver
// goroutine per stage, the sink on Run's goroutine, and bounded channels
// between them.
//
// # Invariant
//
// A stage holds at most limit items: it receives an item from its input
// only while the items it has received and not yet sent on (running,
// queued on the pool, or done and waiting for their turn) number fewer
// than limit. Its tasks report on a channel of capacity limit, so a task
// never blocks; only the driver goroutine waits (for the next stage's
// queue, its input, or a result). Every send and receive of a driver or
// the source also selects on the run's context, and a driver that stops
// first collects the result of every task it submitted, so once the
// context is done every goroutine returns, and Run, which waits for them
// all, leaves nothing running.

import (
	"context"
	"iter"
	"sync"

	"github.com/magpie-go/magpie/forkjoin"
)

// Pipe is a pipeline built up to a stage whose output items are of type
// T. It only describes the pipeline: Run starts it, and can run it again
// if its source can be iterated again.
type Pipe[T any] struct {
	start func(r *run) <-chan T
}

// From returns a pipeline whose source is seq. Run iterates seq on a
// goroutine of its own; a seq that blocks delays Run's return on
// cancellation until it yields or returns. A panic in seq (or a
// runtime.Goexit) fails the run with a *forkjoin.PanicError, even one
// raised after the run stopped and yield returned false (in a cleanup, or
// by a yield after false): Run returns it unless an error came first
// (TestSourcePanicAfterStopFailsNothingElse,
// TestSourceGoexitAfterStopFailsRun).
func From[T any](seq iter.Seq[T]) *Pipe[T] {
	if seq == nil {
		panic("pipeline: From called with a nil iter.Seq")
	}
	return &Pipe[T]{start: func(r *run) <-chan T {
		out := make(chan T)
		r.wg.Go(func() {
			defer close(out)
			// finished: the loop ended, seq having run out or returned
			// after the stop's yield false. A panic or runtime.Goexit in
			// seq, even after the stop (a cleanup, a yield after false),
			// skips it and fails the run
			// (TestSourcePanicAfterStopFailsNothingElse). The stop breaks
			// out of the loop: a return from the body would skip the
			// statement after it too, and a Goexit after the stop looked
			// like that return and was lost
			// (TestSourceGoexitAfterStopFailsRun).
			finished := false
			defer func() {
				if !finished {
					r.fail(forkjoin.CapturePanic(recover())) // a panic, or runtime.Goexit (nil)
				}
			}()
		loop:
			for v := range seq {
				select {
				case out <- v:
				case <-r.ctx.Done():
					break loop
				}
			}
			finished = true
		})
		return out
	}}
}

// FromChan returns a pipeline whose source is ch, read until it is closed
// or the run stops.
func FromChan[T any](ch <-chan T) *Pipe[T] {
	if ch == nil {
		panic("pipeline: FromChan called with a nil channel")
	}
	return &Pipe[T]{start: func(r *run) <-chan T {
		out := make(chan T)
		r.wg.Go(func() {
			defer close(out)
			for {
				select {
				case v, ok := <-ch:
					if !ok {
						return
					}
					select {
					case out <- v:
					case <-r.ctx.Done():
						return
					}
				case <-r.ctx.Done():
					return
				}
			}
		})
		return out
	}}
}

// Option configures a stage.
type Option func(*stageConfig)

type stageConfig struct {
	limit, buffer int
	unordered     bool
}

// WithLimit sets how many items the stage holds at once, running or
// waiting for their turn to leave (default: its pool's parallelism).
func WithLimit(n int) Option { return func(c *stageConfig) { c.limit = n } }

// WithBuffer sets the capacity of the queue from the stage to the next
// (default, and for 0: the stage's limit).
func WithBuffer(n int) Option { return func(c *stageConfig) { c.buffer = n } }

// WithUnordered lets items leave the stage as they complete rather than in
// the order they entered it.
func WithUnordered() Option { return func(c *stageConfig) { c.unordered = true } }

// Map adds a stage that applies fn to every item of p as a task on pool
// (nil: forkjoin.Default()). fn gets the run's context, which is done once
// the pipeline stops, and the worker it runs on, to fork with. An error
// from fn, or a panic (as a *forkjoin.PanicError), stops the pipeline.
func Map[T, U any](p *Pipe[T], pool *forkjoin.Pool, fn func(ctx context.Context, w *forkjoin.Worker, v T) (U, error), opts ...Option) *Pipe[U] {
	if p == nil { // checked here, not as a nil dereference inside a later Run
		panic("pipeline: Map called with a nil *Pipe")
	}
	if fn == nil {
		panic("pipeline: Map called with a nil function")
	}
	if pool == nil {
		pool = forkjoin.Default()
	}
	c := stageConfig{limit: pool.Parallelism()}
	for _, o := range opts {
		o(&c)
	}
	if c.limit < 1 {
		panic("pipeline: WithLimit below 1")
	}
	if c.buffer == 0 {
		c.buffer = c.limit
	}
	if c.buffer < 0 {
		panic("pipeline: WithBuffer below 0")
	}
	return &Pipe[U]{start: func(r *run) <-chan U {
		in := p.start(r)
		out := make(chan U, c.buffer)
		s := &stage[T, U]{r: r, pool: pool, fn: fn, cfg: c, in: in, out: out}
		r.wg.Go(s.drive)
		return out
	}}
}

// Run starts p and calls sink with every item that leaves its last stage,
// on the calling goroutine. It returns the first error of a stage, the
// source or sink, or ctx.Err() if ctx is done first; nil once every item
// has gone through. It returns only when every goroutine and task it
// started has finished. A panic in sink is re-raised once the pipeline has
// stopped.
func Run[T any](ctx context.Context, p *Pipe[T], sink func(v T) error) error {
	if p == nil {
		panic("pipeline: Run called with a nil *Pipe")
	}
	if sink == nil {
		panic("pipeline: Run called with a nil sink")
	}
	r := &run{}
	r.ctx, r.cancel = context.WithCancel(ctx)
	defer func() {
		r.cancel()
		r.wg.Wait()
	}()
	out := p.start(r)
loop:
	for {
		select {
		case v, ok := <-out:
			if !ok || r.ctx.Err() != nil {
				break loop
			}
			if err := sink(v); err != nil {
				r.fail(err)
				break loop
			}
		case <-r.ctx.Done():
			break loop
		}
	}
	r.cancel()
	r.wg.Wait()
	if r.err != nil { // read after Wait: every fail happened before
		return r.err
	}
	return ctx.Err()
}

// run is the state of one Run.
type run struct {
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
	err    error // the first failure; written under once, read by Run after wg.Wait
}

// fail records err if it is the first failure, and stops the run.
func (r *run) fail(err error) {
	r.once.Do(func() { r.err = err })
	r.cancel()
}

// stage is one Map stage of a run, driven by drive on its own goroutine.
type stage[T, U any] struct {
	r    *run
	pool *forkjoin.Pool
	fn   func(context.Context, *forkjoin.Worker, T) (U, error)
	cfg  stageConfig
	in   <-chan T
	out  chan U
}

// result is what a task reports to its driver.
type result[U any] struct {
	seq uint64
	v   U
	err error
}

// drive is the stage's goroutine; only it touches the fields below its
// first line, so they need no synchronization.
func (s *stage[T, U]) drive() {
	defer close(s.out)
	limit := s.cfg.limit
	results := make(chan result[U], limit) // at most limit tasks outstanding: a send never blocks
	// Items done and not yet sent on: in order, slot seq%limit (there are
	// never limit+1 items between nextOut and nextIn); as completed, a FIFO.
	ring := make([]result[U], limit)
	present := make([]bool, limit)
	var fifo []U
	var nextIn, nextOut uint64
	outstanding := 0
	inputDone := false
	defer func() {
		for ; outstanding > 0; outstanding-- {
			<-results // every task submitted has finished when drive returns
		}
	}()
	for {
		var inCh <-chan T
		if !inputDone && nextIn-nextOut < uint64(limit) {
			inCh = s.in
		}
		var outCh chan<- U
		var head U
		switch {
		case s.cfg.unordered && len(fifo) > 0:
			outCh, head = s.out, fifo[0]
		case !s.cfg.unordered && present[nextOut%uint64(limit)]:
			outCh, head = s.out, ring[nextOut%uint64(limit)].v
		}
		var resCh <-chan result[U]
		if outstanding > 0 {
			resCh = results
		}
		if inCh == nil && outCh == nil && resCh == nil {
			return // input closed, everything sent on
		}
		select {
		case v, ok := <-inCh:
			if !ok {
				inputDone = true
				continue
			}
			seq := nextIn
			err := s.pool.ExecuteContext(s.r.ctx, func(w *forkjoin.Worker) { s.call(w, seq, v, results) })
			if err != nil {
				s.r.fail(err)
				return
			}
			nextIn++
			outstanding++
		case outCh <- head:
			if s.cfg.unordered {
				var zero U
				fifo[0] = zero
				fifo = fifo[1:]
			} else {
				i := nextOut % uint64(limit)
				ring[i], present[i] = result[U]{}, false
			}
			nextOut++
		case d := <-resCh:
			outstanding--
			if d.err != nil {
				s.r.fail(d.err)
				return
			}
			if s.cfg.unordered {
				fifo = append(fifo, d.v)
			} else {
				i := d.seq % uint64(limit)
				ring[i], present[i] = d, true
			}
		case <-s.r.ctx.Done():
			return
		}
	}
}

// call runs fn for one item on w and reports its outcome on results,
// however fn ends: a panic (or runtime.Goexit) is reported as a
// *forkjoin.PanicError, from the deferred function, so that the driver
// always hears from every task it submitted.
func (s *stage[T, U]) call(w *forkjoin.Worker, seq uint64, v T, results chan<- result[U]) {
	res := result[U]{seq: seq}
	finished := false
	defer func() {
		if !finished {
			res.err = forkjoin.CapturePanic(recover()) // nil: runtime.Goexit
		}
		results <- res
	}()
	res.v, res.err = s.fn(s.r.ctx, w, v)
	finished = true
}
