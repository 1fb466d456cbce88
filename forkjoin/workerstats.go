package forkjoin

import "fmt"

// WorkerStats is a snapshot of one worker's counters: the per-worker
// parts of Stats. The counters follow Stats' publication rule: a worker
// counts in plain fields of its own and publishes them when it goes idle,
// parks or exits, so while it is busy its entry lags what it has done (by
// the work since it was last idle); once the pool is idle or closed every
// entry is exact, and the entries sum to Stats' counters of the same name.
// Completed and Queued do not lag: they are read as they are.
type WorkerStats struct {
	// Index is the worker's Index(): below Parallelism() for the pool's
	// workers, from Parallelism() up to MaxWorkers()-1 for the
	// compensating workers Block starts.
	Index int
	// Compensating reports a compensating worker's slot (see Block); its
	// counters add up over every time Block started a worker in it.
	Compensating bool
	Executed     uint64 // tasks run, forked or submitted, including inline joins
	Forks        uint64 // tasks pushed on this worker's deque
	Steals       uint64 // elements this worker took from another worker's deque (a block of spawned tasks counts once)
	Helped       uint64 // tasks this worker ran while it waited in a join
	Parks        uint64 // times this worker went to sleep
	Blocks       uint64 // calls of Block from tasks on this worker
	Broadcasts   uint64 // calls of a Broadcast's function run on this worker
	Completed    uint64 // submitted tasks this worker completed (not lagging)
	Queued       int    // tasks other workers can steal from this worker's deque now
}

// String formats the counters on one line.
func (s WorkerStats) String() string {
	return fmt.Sprintf("index=%d compensating=%t executed=%d forks=%d steals=%d helped=%d parks=%d blocks=%d broadcasts=%d completed=%d queued=%d",
		s.Index, s.Compensating, s.Executed, s.Forks, s.Steals, s.Helped, s.Parks, s.Blocks, s.Broadcasts, s.Completed, s.Queued)
}

// WorkerStats returns a snapshot of each worker's counters, one entry per
// worker slot in Index order: the Parallelism() workers, then the
// MaxWorkers()-Parallelism() slots of compensating workers. It reads each
// worker's published counters with atomic loads and takes no lock, so it
// may be called at any time from any goroutine; see WorkerStats (the type)
// for how far a busy worker's entry lags. A nil p means Default().
func (p *Pool) WorkerStats() []WorkerStats {
	p = orDefault(p, "Pool.WorkerStats")
	out := make([]WorkerStats, len(p.workers))
	for i, w := range p.workers {
		out[i] = WorkerStats{
			Index:        w.index,
			Compensating: w.spare,
			Executed:     w.pub.executed.Load(),
			Forks:        w.pub.forks.Load(),
			Steals:       w.pub.steals.Load(),
			Helped:       w.pub.helped.Load(),
			Parks:        w.pub.parks.Load(),
			Blocks:       w.pub.blocks.Load(),
			Broadcasts:   w.pub.broadcasts.Load(),
			Completed:    w.completed.Load() + uint64(w.execDone.Load()),
			Queued:       w.deque.Len(),
		}
	}
	return out
}
