package forkjoin

import (
	"runtime"
	"sync/atomic"
	"time"
)

// waitCounters are one worker's queue-wait counters: how many timed
// submissions it took (see waitSample), the sum of their queue waits and
// the longest, in nanoseconds. Stats sums them over the workers.
//
// Invariant: a snapshot is consistent, without a lock on the taking path.
// Read one by one while a take added to them, three shared counters gave
// snapshots that counted a wait in the total and not yet in the count (a
// mean wait longer than QueueWaitMax), or one wait with a longest of 0
// (TestRev24StatsQueueWaitConsistent, review rev24). No order of writes
// and reads of three separate atomics keeps both "mean <= max" and "max
// <= total", so each worker's counters are a seqlock with a single
// writer, the worker: add makes seq odd, writes, and makes it even again;
// read retries until it has read all three between the same even seq.
// Per worker, a consistent snapshot has max <= total <= count*max, and so
// has the sum over the workers (max of the maxes, sums of the rest).
//
// The fields are atomics, so that the race detector sees what the seqlock
// orders; add's loads of its own fields need no ordering (only add writes
// them).
type waitCounters struct {
	seq   atomic.Uint64 // odd while add is writing
	n     atomic.Uint64
	total atomic.Int64
	max   atomic.Int64
}

// add records one queue wait of d nanoseconds. Only the counters' worker
// calls it.
func (c *waitCounters) add(d int64) {
	d = max(d, 0)
	c.seq.Add(1) // odd: readers retry
	c.n.Store(c.n.Load() + 1)
	c.total.Store(c.total.Load() + d)
	if d > c.max.Load() {
		c.max.Store(d)
	}
	c.seq.Add(1) // even again
}

// read returns a consistent snapshot of the counters (see waitCounters).
// It waits, yielding, while add is writing: a few instructions, unless the
// worker was descheduled in between.
func (c *waitCounters) read() (n uint64, total, longest time.Duration) {
	for {
		if s := c.seq.Load(); s&1 == 0 {
			n, total, longest = c.n.Load(), time.Duration(c.total.Load()), time.Duration(c.max.Load())
			if c.seq.Load() == s {
				return n, total, longest
			}
		}
		runtime.Gosched()
	}
}
