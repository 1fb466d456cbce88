package magpie

import (
	"iter"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/magpie-go/magpie/forkjoin"
)

// Parallel loops over iterators (ForSeq, MapSeq).
//
// An iter.Seq is pulled by the goroutine that calls it, and a seq is not
// safe to pull from two goroutines unless it says so; so the caller pulls
// it, alone, and fills chunks of elements that pool tasks run. Nothing
// else about the seq is assumed: it may block (a channel, a file) without
// holding up a worker, since the caller is not one (unless it is called
// from a task).
//
// The chunks in flight form a ring, oldest first, of at most seqWindow·P
// chunks (P the pool's parallelism). A chunk is not tied to a pool task:
// the caller appends it to the run's FIFO of queued chunks (pending, under
// mu) and Executes a new task only while fewer than seqWindow·P are
// outstanding; each task takes the oldest queued chunk, runs it, and goes
// on until none is queued, then exits. A queued chunk can be taken back:
// a task and the caller race to move it out of chunkQueued, and whoever
// wins runs it. The caller never sleeps on a chunk nobody has started: when
// the ring is full, or at the end, it runs queued chunks itself (oldest
// first) and sleeps only on a chunk a pool task is running. That is what
// keeps a loop called from inside the pool (from a task, from a body, with
// a *Pool or a *Worker, on a pool of any size) free of deadlock: every wait
// is for a running task, and a running task progresses by the same
// argument one nesting level down.
//
// A chunk taken back costs no submission: the tasks outstanding at any
// time are at most seqWindow·P, so after the call has returned at most
// seqWindow·P no-op tasks stay queued (until a worker polls them: they find
// the FIFO empty and exit), whatever the length of the seq.

// seqWindow is the number of chunks per worker the ring may hold: one
// running and one queued per worker keeps every worker busy while the caller
// fills the next chunk.
const seqWindow = 2

// seqMaxChunk caps the adaptive chunk size, and so the memory a loop holds:
// at most (seqWindow·P + 1) chunks of seqMaxChunk elements.
const seqMaxChunk = 4096

// seqChunkTime is the time the adaptive chunk size aims at for one chunk:
// large against the hand-over (a submission and a wake-up), small enough
// that the last chunks of a loop do not leave the other workers idle for
// long.
const seqChunkTime = 50 * time.Microsecond

// Chunk states. The caller moves a chunk idle → queued before Execute;
// then the pool task moves it queued → taken (and signals done when it has
// run it) or the caller moves it queued → finished (and runs it itself).
// The caller alone moves taken → finished (after receiving done) and
// finished → idle (when it recycles the chunk).
const (
	chunkIdle int32 = iota
	chunkQueued
	chunkTaken
	chunkFinished
)

// seqChunk is a run of consecutive elements of the seq and, for MapSeq,
// their results.
type seqChunk[E, R any] struct {
	in    []E
	out   []R
	state atomic.Int32
	done  chan struct{} // one token per run by a pool task
	// seq numbers the chunks of a run in pull order. The caller writes it
	// before publishing the chunk (the state store and mu order it before
	// any task's read); only the runner of the chunk reads it meanwhile.
	seq int64
	// perr is MapSeq's panic in this chunk, written by whoever runs it and
	// read by the caller after the chunk has finished (c.done, or its own
	// run), so no other goroutine sees it while it is written.
	perr *forkjoin.PanicError
}

// noPanic is seqRun.panicAt when no chunk has panicked.
const noPanic = math.MaxInt64

// seqRun is one range over the seq. Its fields but mu, pending, tasks,
// stop, perr, panicAt and cost are the caller's alone (task is read-only).
type seqRun[E, R any] struct {
	p       *forkjoin.Pool
	leaf    func(c *seqChunk[E, R]) // runs the user's function on c.in
	window  int                     // max chunks in the ring; 0: run everything inline
	grain   int                     // fixed chunk size; 0: adaptive
	size    int                     // size of the next chunk
	ring    []*seqChunk[E, R]       // chunks handed out, oldest first
	free    []*seqChunk[E, R]       // recycled chunks
	next    int64                   // seq of the next chunk
	ordered bool                    // MapSeq: a chunk's panic is raised when delivery reaches it
	task    func(*forkjoin.Worker)  // the pool task: s.serve

	mu      sync.Mutex
	pending []*seqChunk[E, R] // under mu: handed chunks possibly still queued, oldest first, a circular buffer of window slots
	phead   int               // under mu: index of the oldest in pending
	plen    int               // under mu: number of chunks in pending, at most len(ring) ≤ window
	tasks   int               // under mu: pool tasks Executed that have not exited, at most window

	panicAt atomic.Int64                        // MapSeq: lowest seq of a chunk that panicked, or noPanic
	stop    atomic.Bool                         // a panic, or the consumer stopped: run nothing more
	perr    atomic.Pointer[forkjoin.PanicError] // the first panic of the user's function
	cost    atomic.Int64                        // ns per element of the last chunk run
}

func newSeqRun[E, R any](r forkjoin.Runner, grain int, ordered bool, leaf func(c *seqChunk[E, R])) *seqRun[E, R] {
	p := runnerPool(r)
	if w, ok := r.(*forkjoin.Worker); ok {
		p = w.Pool() // checkRunner has ruled out a nil *Worker
	}
	s := &seqRun[E, R]{p: p, leaf: leaf, grain: grain, size: grain, ordered: ordered}
	s.task = s.serve
	s.panicAt.Store(noPanic)
	// A pool of one worker, or a closed one: everything on the caller
	// (window 0). A pool closed later refuses chunks, which the caller
	// runs (hand).
	if par := parallelism(r); par > 1 {
		s.window = seqWindow * par
		s.pending = make([]*seqChunk[E, R], s.window)
	}
	return s
}

// fail records the first panic and stops the loop.
func (s *seqRun[E, R]) fail(pe *forkjoin.PanicError) {
	s.perr.CompareAndSwap(nil, pe)
	s.stop.Store(true)
}

// halted reports whether the pulling must stop: the loop has stopped, or
// (MapSeq) a chunk has panicked, so that no chunk pulled later is delivered.
func (s *seqRun[E, R]) halted() bool {
	return s.stop.Load() || s.panicAt.Load() != noPanic
}

// runChunk runs the user's function on c unless the loop has stopped (or,
// for MapSeq, an older chunk has panicked), turning a panic (or
// runtime.Goexit) into a recorded *PanicError: it never unwinds, so that a
// panic stops the pulling through yield's false instead of tearing through
// the seq. ForSeq's panic stops the loop at once; MapSeq's is kept on the
// chunk, and raised only when the delivery reaches it (retire).
func (s *seqRun[E, R]) runChunk(c *seqChunk[E, R]) {
	if s.stop.Load() || c.seq > s.panicAt.Load() {
		return
	}
	ok := false
	defer func() {
		if ok {
			return
		}
		pe := forkjoin.CapturePanic(recover())
		if !s.ordered {
			s.fail(pe)
			return
		}
		c.perr = pe
		for at := s.panicAt.Load(); c.seq < at && !s.panicAt.CompareAndSwap(at, c.seq); at = s.panicAt.Load() {
		}
	}()
	t0 := time.Since(epoch)
	s.leaf(c)
	s.cost.Store(int64(time.Since(epoch)-t0) / int64(max(len(c.in), 1)))
	ok = true
}

// serve is the pool task of a run: it runs the oldest queued chunk until
// none is left, then exits. It runs a chunk only after taking it from
// chunkQueued, and the caller does not return before every chunk it
// queued has finished, so a task never runs the user's function once the
// call has returned; a task that starts later finds pending empty.
func (s *seqRun[E, R]) serve(*forkjoin.Worker) {
	exited := false
	defer func() {
		if !exited { // a Goexit in the user's function
			s.mu.Lock()
			s.tasks--
			s.mu.Unlock()
		}
	}()
	for {
		c := s.take()
		if c == nil {
			exited = true // take has counted the exit
			return
		}
		s.runTaken(c)
	}
}

// take removes the oldest chunk of pending and moves it from chunkQueued to
// chunkTaken, dropping the chunks the caller took back meanwhile. With
// none left it counts the task's exit, under the same lock as the caller's
// test in hand, so that a chunk appended is either seen here or sees room
// for a new task.
func (s *seqRun[E, R]) take() *seqChunk[E, R] {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.plen > 0 {
		c := s.popPending()
		if c.state.CompareAndSwap(chunkQueued, chunkTaken) {
			return c
		}
	}
	s.tasks--
	return nil
}

// popPending removes the oldest chunk of pending. s.mu must be held.
func (s *seqRun[E, R]) popPending() *seqChunk[E, R] {
	c := s.pending[s.phead]
	s.pending[s.phead] = nil
	s.phead = (s.phead + 1) % len(s.pending)
	s.plen--
	return c
}

// runTaken runs c, taken by a pool task, and signals its end.
func (s *seqRun[E, R]) runTaken(c *seqChunk[E, R]) {
	defer func() { c.done <- struct{}{} }() // deferred: sent even if the leaf calls Goexit
	s.runChunk(c)
}

// chunk returns an empty chunk, recycled if possible.
func (s *seqRun[E, R]) chunk() *seqChunk[E, R] {
	if n := len(s.free); n > 0 {
		c := s.free[n-1]
		s.free = s.free[:n-1]
		return c
	}
	return &seqChunk[E, R]{in: make([]E, 0, s.size), done: make(chan struct{}, 1)}
}

// claim runs c on the caller if no pool task has taken it yet.
func (s *seqRun[E, R]) claim(c *seqChunk[E, R]) bool {
	if c.state.CompareAndSwap(chunkQueued, chunkFinished) {
		s.runChunk(c)
		return true
	}
	return false
}

// ready reports, without waiting, whether c has finished.
func (s *seqRun[E, R]) ready(c *seqChunk[E, R]) bool {
	if st := c.state.Load(); st != chunkTaken {
		return st == chunkFinished
	}
	select {
	case <-c.done:
		c.state.Store(chunkFinished)
		return true
	default:
		return false
	}
}

// wait returns once c has finished: it runs c if c is still queued;
// while a pool task runs c, it runs the other queued chunks of the ring,
// oldest first, and sleeps only when none is left.
func (s *seqRun[E, R]) wait(c *seqChunk[E, R]) {
	if s.claim(c) || s.ready(c) {
		return
	}
	for _, d := range s.ring {
		if s.ready(c) {
			return
		}
		s.claim(d)
	}
	<-c.done
	c.state.Store(chunkFinished)
}

// retire removes the oldest chunk of the ring, which must have finished,
// passes it to deliver unless the loop has stopped (or, for MapSeq, it
// follows a chunk that panicked), and recycles it. A chunk that panicked
// (MapSeq) is delivered up to the panicking element, and then its panic
// stops the loop, unless the consumer stopped first: then it is dropped.
// retire reports false if the loop must stop.
func (s *seqRun[E, R]) retire(deliver func(c *seqChunk[E, R]) bool) bool {
	c := s.ring[0]
	s.ring = append(s.ring[:0], s.ring[1:]...)
	// c may still be in pending (taken back by the caller, no task popped
	// it); if so it is pending[0]: pending holds handed chunks in order,
	// and every older one was removed by a task or by its own retire.
	s.mu.Lock()
	if s.plen > 0 && s.pending[s.phead] == c {
		s.popPending()
	}
	s.mu.Unlock()
	ok := true
	if !s.stop.Load() && c.seq <= s.panicAt.Load() && deliver != nil {
		if !deliver(c) {
			s.stop.Store(true)
			ok = false
		} else if c.perr != nil {
			s.fail(c.perr)
			ok = false
		}
	}
	clear(c.in) // drop references to the elements and results
	clear(c.out)
	c.in, c.out, c.perr = c.in[:0], c.out[:0], nil
	c.state.Store(chunkIdle)
	s.free = append(s.free, c)
	return ok
}

// hand gives the full chunk c to the pool, after retiring the chunks that
// have finished and, if the ring is full, the oldest one (running queued
// chunks meanwhile). It reports false if the loop must stop.
func (s *seqRun[E, R]) hand(c *seqChunk[E, R], deliver func(c *seqChunk[E, R]) bool) bool {
	for len(s.ring) > 0 && s.ready(s.ring[0]) {
		if !s.retire(deliver) {
			return false
		}
	}
	if len(s.ring) >= s.window {
		s.wait(s.ring[0])
		if !s.retire(deliver) {
			return false
		}
	}
	c.seq = s.next
	s.next++
	c.state.Store(chunkQueued)
	s.ring = append(s.ring, c)
	s.mu.Lock()
	// plen < window: pending holds only chunks of the ring, which has
	// room for c.
	s.pending[(s.phead+s.plen)%len(s.pending)] = c
	s.plen++
	spawn := s.tasks < s.window
	if spawn {
		s.tasks++
	}
	s.mu.Unlock()
	if spawn {
		if err := s.p.Execute(s.task); err != nil {
			// A full queue (WithMaxQueued) or a closed pool: the caller
			// runs the chunk itself (unless a task took it meanwhile).
			s.mu.Lock()
			s.tasks--
			s.mu.Unlock()
			s.claim(c)
		}
	}
	s.resize()
	return !s.halted()
}

// resize sets the size of the next chunk from the cost per element the
// last chunk measured: about seqChunkTime of work, growing at most twofold
// per chunk, within [1, seqMaxChunk].
func (s *seqRun[E, R]) resize() {
	if s.grain > 0 {
		return
	}
	if cost := s.cost.Load(); cost > 0 {
		s.size = min(int(int64(seqChunkTime)/cost), 2*s.size)
	} else {
		s.size *= 2
	}
	s.size = min(max(s.size, 1), seqMaxChunk)
}

// drain finishes every chunk of the ring in order, delivering each (or,
// once the loop has stopped, just waiting for it).
func (s *seqRun[E, R]) drain(deliver func(c *seqChunk[E, R]) bool) {
	for len(s.ring) > 0 {
		s.wait(s.ring[0])
		s.retire(deliver)
	}
}

// cancel, deferred by drive, stops the loop if it is unwinding (a panic in
// the seq or in MapSeq's consumer) and waits for the chunks in flight, so
// that no task runs the user's function once the call has returned. It
// drops the recycled chunks: a no-op task still queued keeps s alive, not
// the chunks' buffers. It leaves the loop stopped in every case, so that a
// seq that calls yield after the call has returned (keeping yield is a
// misuse; the range loop panics then) gets false and runs nothing: before,
// body ran on the caller or a chunk was handed to the pool after ForSeq
// had returned (TestSeqYieldAfterReturnRunsNothing, review rev20).
func (s *seqRun[E, R]) cancel() {
	s.stop.Store(true)
	if len(s.ring) > 0 {
		s.drain(nil)
	}
	s.free, s.ring = nil, nil
}

// drive pulls seq on the calling goroutine. While probing (the first
// probeBudget of the loop, without a Grain), inline handles each element on
// the caller, as the range helpers' probe does: a short loop never touches
// the pool, and the probe measures what an element costs. After it, the
// elements go to chunks. deliver receives the finished chunks in order. A
// false from inline or deliver stops the pulling.
func (s *seqRun[E, R]) drive(seq iter.Seq[E], inline func(E) bool, deliver func(c *seqChunk[E, R]) bool) {
	defer s.cancel()
	probing := s.grain == 0 || s.window == 0
	k, next, start := 0, 1, time.Since(epoch)
	var cur *seqChunk[E, R]
	seq(func(x E) bool {
		if s.halted() {
			return false // also for a seq that calls yield after a false
		}
		if probing {
			if !inline(x) {
				s.stop.Store(true)
				return false
			}
			if k++; k == next && s.window > 0 {
				elapsed := time.Since(epoch) - start
				if elapsed < probeBudget {
					next = k * 2
				} else {
					probing = false
					perElem := max(int64(elapsed)/int64(k), 1)
					s.size = min(max(int(int64(seqChunkTime)/perElem), 1), seqMaxChunk)
				}
			}
			return true
		}
		if cur == nil {
			cur = s.chunk()
		}
		cur.in = append(cur.in, x)
		if len(cur.in) < s.size {
			return true
		}
		c := cur
		cur = nil
		return s.hand(c, deliver)
	})
	if s.stop.Load() {
		return // cancel waits for the ring
	}
	if cur != nil {
		// The last, partial chunk: the caller would only wait now, so it
		// runs the chunk itself.
		cur.seq = s.next
		s.next++
		cur.state.Store(chunkFinished)
		s.ring = append(s.ring, cur)
		s.runChunk(cur)
	}
	s.drain(deliver)
}

// rethrowRun panics with the recorded panic of the user's function, if
// any, once the loop has stopped.
func (s *seqRun[E, R]) rethrowRun() {
	if pe := s.perr.Load(); pe != nil {
		panic(pe)
	}
}

// ForSeq calls body(x) for every element x of seq, in parallel on r, and
// returns when all calls have returned. It is the parallel
//
//	for x := range seq { body(x) }
//
// with the calls in no particular order and concurrent, so body must be
// safe for that. r is a *forkjoin.Pool, the *forkjoin.Worker of the calling
// task, or nil for forkjoin.Default().
//
// seq is pulled on the calling goroutine only (an iter.Seq need not be
// safe to pull concurrently: TestSeqPulledOnCallingGoroutine), in chunks that pool tasks run; the caller
// runs chunks too whenever the pool is behind. Without options the loop
// first runs on the caller for about 50 µs (a short loop never touches the
// pool) and then sizes its chunks from the time an element takes (about
// 50 µs of work per chunk, at most 4096 elements); Grain(g) sets chunks of
// g elements. Memory: at most 2·P + 1 chunks are held at once (P the
// pool's parallelism): 2·P handed to the pool and the one being filled
// (TestForSeqBoundedInFlight).
// Submissions: chunks are not tied to pool tasks; at most 2·P tasks of a
// loop are outstanding at once, each running the oldest queued chunks
// until none is left, so a chunk the caller runs itself leaves nothing
// behind, and once ForSeq has returned at most 2·P tasks of it that found
// no work may still sit in the pool's queue (they run no user code:
// TestForSeqNoStaleTasks, TestForSeqBoundedQueueAfterReturn).
//
// A panic in body stops the pulling (seq's yield returns false), waits for
// the chunks in flight, and reaches the caller as a *forkjoin.PanicError
// (TestSeqBodyPanics). A panic in seq itself propagates unchanged, once the
// chunks in flight have finished (TestSeqSourcePanics). ForSeq never sleeps
// on a chunk no task has started, so body may call helpers on the same
// pool, and ForSeq may be called from a task, with its *Worker or its
// *Pool, without deadlock (TestForSeqNested). If the pool refuses a chunk
// (a full WithMaxQueued queue, a closed pool), the caller runs it
// (TestForSeqRefusedChunks). ForSeq panics if seq or body is nil
// (TestSeqNilArguments).
//
// Known limit (found by review, not fixed yet): a body that calls
// runtime.Goexit unwinds the calling goroutine through the seq when its
// chunk ran on the caller, and arrives as a *forkjoin.PanicError with
// ErrGoexit when it ran on a worker.
func ForSeq[E any](r forkjoin.Runner, seq iter.Seq[E], body func(E), opts ...Option) {
	checkRunner("ForSeq", r)
	if seq == nil {
		panic("magpie: ForSeq called with a nil seq")
	}
	if body == nil {
		panic("magpie: ForSeq called with a nil body")
	}
	s := newSeqRun(r, collectOptions(opts).grain, false, func(c *seqChunk[E, struct{}]) {
		for _, x := range c.in {
			body(x)
		}
	})
	s.drive(seq, func(x E) bool { return s.inline(body, x) }, nil)
	s.rethrowRun()
}

// inline runs body(x) on the caller during the probe, recording a panic
// as runChunk does; it reports false after a panic.
func (s *seqRun[E, R]) inline(body func(E), x E) (ok bool) {
	defer func() {
		if !ok {
			s.fail(forkjoin.CapturePanic(recover()))
		}
	}()
	body(x)
	return true
}

// MapSeq returns an iterator over f(x) for every element x of seq, in the
// order of seq, with the calls of f computed in parallel on r: the
// parallel
//
//	func(yield func(R) bool) { for x := range seq { if !yield(f(x)) { return } } }
//
// Each range over the result ranges over seq once, pulling it on the
// ranging goroutine (TestSeqPulledOnCallingGoroutine), which also receives
// the results; f runs in chunks on pool tasks (and on the ranging goroutine
// when the pool is behind), and must be safe to call concurrently. r, the
// options and the chunks are as for ForSeq; results are buffered only in
// the chunks, so a range holds at most 2·P + 1 chunks of elements and their
// results (TestMapSeqBoundedInFlight). If r is a *forkjoin.Worker, range
// over the result only from the task running on it.
//
// Stopping the range early (break) stops the pulling, skips the chunks no
// task has started and waits for the running ones: when the loop statement
// ends, no call of f is running (TestMapSeqEarlyStop). f runs ahead of the consumer, but a panic
// in f is raised where the sequential loop would raise it: the range
// yields every result before the panicking element, in order, and then
// the panic arrives as a *forkjoin.PanicError (after the chunks in flight
// have stopped); if the consumer stops before reaching that element, the
// panic is dropped (TestMapSeqPanicInOrder, TestMapSeqPanicAfterBreak). A
// panic in seq or in the loop's body propagates
// unchanged, likewise after the chunks in flight; a panic in seq drops the
// results not yet yielded, and with them any panic of f recorded among
// them (the sequential loop would have yielded those results, or raised
// f's panic, first). MapSeq panics if seq or f is nil. The submission
// bound and the Goexit limit of ForSeq apply too.
func MapSeq[E, R any](r forkjoin.Runner, seq iter.Seq[E], f func(E) R, opts ...Option) iter.Seq[R] {
	checkRunner("MapSeq", r)
	if seq == nil {
		panic("magpie: MapSeq called with a nil seq")
	}
	if f == nil {
		panic("magpie: MapSeq called with a nil function")
	}
	grain := collectOptions(opts).grain
	return func(yield func(R) bool) {
		s := newSeqRun(r, grain, true, func(c *seqChunk[E, R]) {
			// c.out grows per element: after a panic it holds the
			// results before the panicking element, delivered first.
			for _, x := range c.in {
				c.out = append(c.out, f(x))
			}
		})
		var v R
		s.drive(seq, func(x E) bool {
			// f on the caller, its panic recorded; yield outside inline,
			// so that the consumer's own panic is not rewritten.
			if !s.inline(func(x E) { v = f(x) }, x) {
				return false
			}
			return yield(v)
		}, func(c *seqChunk[E, R]) bool {
			for _, v := range c.out {
				if !yield(v) {
					return false
				}
			}
			return true
		})
		s.rethrowRun()
	}
}
