package magpie

import (
	"context"
	"sync"

	"github.com/magpie-go/magpie/forkjoin"
)

// ForErr calls body(i) for i in [0, n), in parallel on r, and returns the
// first error a call returns, or nil. It is the parallel form of
//
//	for i := range n {
//		if err := body(i); err != nil {
//			return err
//		}
//	}
//	return nil
//
// and of an errgroup.Group with one Go per index. Once a call has returned
// an error no new call starts: every piece of the range checks a shared
// bound before each call, so once the bound is lowered (right after the
// error is recorded) at most one call per worker still running the loop
// starts (the one whose check came first), and pieces not yet started
// never run (TestErrHelpersAllFailBound, TestForContextStopsAfterError).
// ForErr returns only once every call that started has
// returned, as errgroup.Group.Wait does: nothing of the call runs after it
// returns, also when a body calls runtime.Goexit (as t.FailNow does): the
// caller then gets a *forkjoin.PanicError with ErrGoexit once the pieces
// other workers took have finished (TestErrHelpersWaitForCallsInFlight),
// if that call ran on a worker; a call run on the caller's goroutine (a
// short loop's first indices, a one-worker or closed pool) unwinds the
// caller, once those pieces have finished, since no recover stops a
// Goexit (TestRev29GoexitOnCallerUnwindsCaller).
//
// Calls must not wait for one another: on a one-worker or closed pool
// they run one after the other; inside a task, a short loop runs on its worker when the
// worker has tasks queued for the idle ones; otherwise a short loop
// reaches the other workers only after a tick of the probe (see
// SequentialThreshold), from outside or inside a task; and on the
// pool fewer calls may run at once than there are waiters. With
// ForContext this includes waiting on ctx.Done() for the cancel another
// call's error triggers, errgroup's common pattern: a call that blocks
// there until a later index fails never returns.
//
// Which error: when several calls fail, ForErr returns the one recorded
// first, errgroup's rule, not the one at the lowest index. The lowest index
// would require running every iteration below a failing one to the end
// (the early exit would be lost for errors found late in the range), and,
// with ForContext, calls that see the canceled context and return
// ctx.Err() would hide the error that caused the cancel. When only one
// index fails, or the loop runs sequentially (a Grain covering n, a
// one-worker or closed pool, or a short loop the probe keeps on its
// caller), the result is the sequential loop's
// (TestForContextFirstErrorNotLowestIndex, TestErrHelpersManyFailures).
//
// r, the options, the sequential threshold and panics are as for For; a
// panic in body also stops the loop as an error does, and is re-raised as
// a *forkjoin.PanicError, even if another call returned an error
// (TestErrHelpersPanics, TestErrHelpersPanicAfterErrorIsRaised). ForErr
// panics if body is nil or n is negative (TestErrHelpersBadInput).
func ForErr(r forkjoin.Runner, n int, body func(i int) error, opts ...Option) error {
	checkRunner("ForErr", r)
	if body == nil {
		panic("magpie: ForErr called with a nil body")
	}
	checkN("ForErr", n)
	grain := collectOptions(opts).grain
	if smallInline(r, n, grain) {
		if n <= slackBatch {
			return forErrSeq(nil, n, body) // the plain loop: no slack check (slackgate.go)
		}
		// Inline while the slack lasts (slackgate.go); the rest, if any,
		// below.
		k, err := forErrInline(nil, r, n, grain, body)
		if k == n {
			return err
		}
		return new(errState).run(r, n-k, grain, shiftBody(body, k))
	}
	return new(errState).run(r, n, grain, body)
}

// ForContext is ForErr with a context, errgroup.WithContext's contract:
// body(ctx, i) receives a context derived from ctx that is canceled as soon
// as a call returns an error (or panics), when ctx is canceled, and when
// ForContext returns. Once that context is done no new call starts (at most
// one per worker, as for ForErr).
//
// ForContext returns the first error a call returned (see ForErr for which
// one when several fail); if no call returned an error but ctx is done when
// the loop ends, it returns ctx.Err(), whether or not every iteration ran.
// A nil error therefore means that body ran for every i and returned nil. If
// ctx is done before the call, no iteration runs (TestForContextParentDone,
// TestContextHelpersDoneBeforeCallRunNothing). It returns only once every
// call that started has returned. r, the options and panics are as for
// ForErr. ForContext panics if ctx or body is nil or n is negative.
func ForContext(ctx context.Context, r forkjoin.Runner, n int,
	body func(ctx context.Context, i int) error, opts ...Option) error {
	checkRunner("ForContext", r)
	if body == nil {
		panic("magpie: ForContext called with a nil body")
	}
	if ctx == nil {
		panic("magpie: ForContext called with a nil context")
	}
	checkN("ForContext", n)
	return forContext(ctx, r, n, collectOptions(opts).grain, body)
}

// forContext runs ForContext and MapContext once their arguments are
// checked.
func forContext(ctx context.Context, r forkjoin.Runner, n, grain int,
	body func(ctx context.Context, i int) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	call := func(i int) error { return body(cctx, i) }
	var err error
	k := 0
	if smallInline(r, n, grain) {
		if n <= slackBatch {
			err, k = forErrSeq(cctx, n, call), n // the plain loop: no slack check (slackgate.go)
		} else {
			// Inline while the slack lasts (slackgate.go); the rest, if
			// any, below.
			k, err = forErrInline(cctx, r, n, grain, call)
		}
	}
	if k < n {
		err = (&errState{ctx: cctx, cancel: cancel}).run(r, n-k, grain, shiftBody(call, k))
	}
	if err != nil {
		return err
	}
	return ctx.Err()
}

// MapErr returns f(x) for every element x of in, in the order of in,
// computing the calls in parallel on r, or nil and the first error f
// returned. It is the parallel form of
//
//	out := make([]R, len(in))
//	for i, x := range in {
//		y, err := f(x)
//		if err != nil {
//			return nil, err
//		}
//		out[i] = y
//	}
//	return out, nil
//
// Stopping at the first error, which error is returned, the wait for the
// calls in flight and panics are as for ForErr; r and the options as for
// For. f must be safe to call concurrently. MapErr panics if f is nil.
func MapErr[E, R any](r forkjoin.Runner, in []E, f func(E) (R, error), opts ...Option) ([]R, error) {
	checkRunner("MapErr", r)
	if f == nil {
		panic("magpie: MapErr called with a nil function")
	}
	out := make([]R, len(in))
	grain := collectOptions(opts).grain
	body := func(i int) error {
		y, err := f(in[i])
		out[i] = y
		return err
	}
	var err error
	k := 0
	if smallInline(r, len(in), grain) {
		if len(in) <= slackBatch {
			err, k = forErrSeq(nil, len(in), body), len(in) // the plain loop: no slack check (slackgate.go)
		} else {
			// Inline while the slack lasts (slackgate.go); the rest, if
			// any, below.
			k, err = forErrInline(nil, r, len(in), grain, body)
		}
	}
	if k < len(in) {
		err = new(errState).run(r, len(in)-k, grain, shiftBody(body, k))
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// MapContext is MapErr with a context: f(ctx, x) receives a context that is
// canceled at the first error, when ctx is canceled and when MapContext
// returns, as for ForContext. It returns the results in the order of in and
// a nil error only if every call ran and returned a nil error; otherwise
// nil and the first error, or ctx.Err() if ctx is done when the loop ends
// and no call failed. MapContext panics if ctx or f is nil.
func MapContext[E, R any](ctx context.Context, r forkjoin.Runner, in []E,
	f func(ctx context.Context, x E) (R, error), opts ...Option) ([]R, error) {
	checkRunner("MapContext", r)
	if f == nil {
		panic("magpie: MapContext called with a nil function")
	}
	if ctx == nil {
		panic("magpie: MapContext called with a nil context")
	}
	out := make([]R, len(in))
	err := forContext(ctx, r, len(in), collectOptions(opts).grain, func(ctx context.Context, i int) error {
		y, err := f(ctx, in[i])
		out[i] = y
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// errState is what the pieces of one ForErr-like call share: the engine's
// early-exit bound, lowered to 0 (everything) at the first error or panic,
// and the first error recorded.
type errState struct {
	limit  rangeLimit
	ctx    context.Context    // ForContext: the bodies' context, checked before each call; may be nil
	cancel context.CancelFunc // ForContext: cancels ctx; may be nil

	mu  sync.Mutex
	err error
}

// run runs body over [0, n) on r with the engine and returns the first
// error recorded. The engine's join waits for every piece, so when run
// returns no call of body is running.
func (st *errState) run(r forkjoin.Runner, n, grain int, body func(i int) error) error {
	st.limit.v.Store(int64(n))
	runRange(r, n, &rangeSpec[struct{}]{
		leaf: func(_ struct{}, lo, hi int) struct{} {
			st.leaf(lo, hi, body)
			return struct{}{}
		},
		grain: grain,
		limit: &st.limit,
	})
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.err
}

// leaf calls body on [lo, hi) until the bound is reached, the context is
// done or a call fails. Both are checked before every call, not only per
// piece: a piece may be an eighth of the range, and the point is that no
// call starts once an error or a cancel is known. A done context lowers the
// bound, so that the pieces not yet started are skipped by the engine
// without even reaching a leaf. (Checking ctx.Err() here, an atomic load,
// rather than lowering the bound from a context.AfterFunc makes "no call
// starts once the context is done" hold at once: AfterFunc runs later, on a
// goroutine of its own.)
func (st *errState) leaf(lo, hi int, body func(i int) error) {
	finished := false
	defer func() {
		if !finished {
			// A panic stops the other pieces as an error does (without
			// it they would run to their end before the join re-raised
			// it), and cancels the bodies' context, which a body may be
			// waiting on. A runtime.Goexit (v == nil) goes on unwinding.
			st.halt()
			if v := recover(); v != nil {
				panic(forkjoin.CapturePanic(v))
			}
		}
	}()
	for i := lo; i < hi && !st.limit.reached(i); i++ {
		if st.ctx != nil && st.ctx.Err() != nil {
			st.limit.lower(0)
			break
		}
		if err := body(i); err != nil {
			st.fail(err)
			break
		}
	}
	finished = true
}

// fail records err if it is the first error, then stops the loop.
func (st *errState) fail(err error) {
	st.mu.Lock()
	if st.err == nil {
		st.err = err
	}
	st.mu.Unlock()
	st.halt()
}

// halt lowers the bound to 0, then cancels the bodies' context: in that
// order, so that a body that sees the context done and returns lets its
// worker see the bound at its next check (ForContext's "at most one call
// per worker after the cancel", TestForContextStopsAfterError).
func (st *errState) halt() {
	st.limit.lower(0)
	if st.cancel != nil {
		st.cancel()
	}
}

// forErrSeq is the error helpers' loop over at most slackBatch indices on
// the caller, with a panic turned into a *forkjoin.PanicError as on the
// pool.
func forErrSeq(ctx context.Context, n int, body func(i int) error) error {
	defer rethrow()
	_, err := forErrLoop(ctx, 0, n, body)
	return err
}

// forErrInline is the small-input path of the error helpers: the
// sequential loop on the caller, stopping at the first error, or before
// any iteration once ctx (if not nil) is done (forContext then reports the
// parent's error), run while the slack lasts (inlineWhileSlack; a panic
// becomes a *forkjoin.PanicError as on the pool). It returns k = n and the
// error when the loop ended on the caller (every index run, an error, or
// ctx done), or a nil error and the first index not run, where the slack
// was gone, for the caller to run [k, n).
func forErrInline(ctx context.Context, r forkjoin.Runner, n, grain int, body func(i int) error) (k int, err error) {
	stopped := false
	k = inlineWhileSlack(r, n, grain, func(lo, hi int) {
		if !stopped {
			stopped, err = forErrLoop(ctx, lo, hi, body)
		}
	})
	if stopped {
		k = n
	}
	return k, err
}

// forErrLoop calls body on [lo, hi) in order until a call fails or ctx (if
// not nil) is done, and reports whether it stopped early, with the error.
func forErrLoop(ctx context.Context, lo, hi int, body func(i int) error) (stopped bool, err error) {
	for i := lo; i < hi; i++ {
		if ctx != nil && ctx.Err() != nil {
			return true, nil
		}
		if err := body(i); err != nil {
			return true, err
		}
	}
	return false, nil
}

// shiftBody returns body with its index shifted by k: the rest [k, n) of a
// loop run as a loop over [0, n-k).
func shiftBody(body func(i int) error, k int) func(i int) error {
	if k == 0 {
		return body
	}
	return func(i int) error { return body(k + i) }
}
