package forkjoin

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

// trimmer is a free list that gives memory back when its worker sleeps.
type trimmer interface{ trim() }

// trimCaches trims w's free lists, before w sleeps with nothing to run:
// what a burst of work left on them beyond their everyday size goes to the
// GC (see spawnList.trim).
func (w *Worker) trimCaches() {
	for _, c := range w.cache {
		if t, ok := c.(trimmer); ok {
			t.trim()
		}
	}
}
