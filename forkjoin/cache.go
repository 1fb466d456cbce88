package forkjoin

import "time"

// cacheSlots bounds the number of distinct task types a worker keeps free
// lists for. Programs rarely fork more than a handful of types;
// beyond that, forks still work and simply allocate.
const cacheSlots = 16

// cacheOf returns w's instance of X, one per worker and per type X, creating
// it on first use. X is a free list type instantiated with the task's
// types, so this gives each worker typed recycling storage without a map:
// the lookup is a short scan comparing type words, a few nanoseconds. Only
// the owning goroutine touches w.cache.
func cacheOf[X any](w *Worker) *X {
	for i := range w.cache {
		switch c := w.cache[i].(type) {
		case *X:
			return c
		case nil:
			x := new(X)
			w.cache[i] = x
			return x
		}
	}
	return new(X) // cache full: a fresh, unshared instance
}

// trimmer is a free list that gives memory back when its worker has been
// idle for a while.
type trimmer interface {
	trim()         // cut the list down to what an idle worker keeps
	overCap() bool // whether trim would drop anything; a load or two
}

// idleTrimDelay is how long a worker sleeps with nothing to run before it
// gives its free lists' excess back (sleepIdle).
//
// The lists keep every node and cell their worker had in use at once, so
// that the next loop of the same size allocates nothing. Trimming them as
// soon as the worker slept made every 1M-spawn loop on 2 workers allocate
// ~40,000 nodes again: between two loops the workers sleep, and the next
// loop's spawner may be the other worker. A pool that gets work at least
// every idleTrimDelay keeps its lists (TestSpawnListKeptOverShortSleep);
// one idle for longer gives a burst's nodes to the GC
// (TestSpawnListIsBounded, TestCellListIsBounded), so a burst does not
// stay on the lists for every later collection to scan.
const idleTrimDelay = 100 * time.Millisecond

// sleepIdle puts w to sleep in the scheduling loop: w is registered as an
// idle sleeper (park's Prepare) and its re-check found nothing. If its
// free lists hold more than a trim keeps, it first sleeps at most
// idleTrimDelay: woken by then, it keeps them; otherwise it trims them and
// sleeps on, still registered, so a wake-up given meanwhile waits in its
// token (internal/park) and is not lost.
func (w *Worker) sleepIdle() {
	if w.cachesOverCap() {
		// w.trimTimer: owner only. SleepTimeout leaves it with no stale
		// tick (even under GODEBUG asynctimerchan=1), so one timer serves
		// every sleep.
		if w.trimTimer == nil {
			w.trimTimer = time.NewTimer(idleTrimDelay)
		} else {
			w.trimTimer.Reset(idleTrimDelay)
		}
		if w.sleepers.SleepTimeout(w.index, w.trimTimer) {
			return
		}
		w.trimCaches()
		w.trims.Add(1) // after the trim: a test that sees it may read the lists
	}
	w.sleepers.Sleep(w.index)
}

// cachesOverCap reports whether one of w's free lists holds more than a
// trim keeps.
func (w *Worker) cachesOverCap() bool {
	for _, c := range w.cache {
		if t, ok := c.(trimmer); ok && t.overCap() {
			return true
		}
	}
	return false
}

// trimCaches trims w's free lists: what a burst of work left on them
// beyond their everyday size goes to the GC (see spawnList.trim).
func (w *Worker) trimCaches() {
	for _, c := range w.cache {
		if t, ok := c.(trimmer); ok {
			t.trim()
		}
	}
}
