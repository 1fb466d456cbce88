package forkjoin_test

// BenchmarkSubmitFloor measures the floor of the submission queue's design
// (injector.go) with everything else taken away: one level, a ring of 4,096
// slots instead of linked blocks, no priorities, no Stats sample, no exec
// node, no panic guard, no counts for Close. A submitter reserves a slot
// with a fetch-and-add and publishes it with an atomic store, as push does;
// GOMAXPROCS consumers take one slot at a time under a try-lock, storing
// the taken count, as take does. Set beside the same channel pool as
// BenchmarkSubmit1M, it shows how much of the gap to the channel the
// guarantees' own mechanism costs (docs/design.md, "The taken slot is left
// alone"). Run as BenchmarkSubmit1M:
//
//	go test ./forkjoin -run XXX -bench SubmitFloor -benchtime 1000000x -cpu 1

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

const floorRing = 4096

// floorSlot is one slot of the prototype: the task, published by seq.
type floorSlot struct {
	fn  func()
	seq atomic.Uint64 // k+1 once slot k's fn is written
}

// floorQueue is the prototype queue; its fields on separate lines as the
// injector's are.
type floorQueue struct {
	_      [128]byte
	pushed atomic.Uint64
	_      [128]byte
	taking atomic.Bool
	taken  atomic.Uint64
	_      [128]byte
	slots  [floorRing]floorSlot
}

func (q *floorQueue) push(fn func()) {
	k := q.pushed.Add(1) - 1
	for k-q.taken.Load() >= floorRing { // full: wait for the takers
		runtime.Gosched()
	}
	s := &q.slots[k%floorRing]
	s.fn = fn
	s.seq.Store(k + 1)
}

// take returns the oldest task if it is ready, else nil.
func (q *floorQueue) take() func() {
	if !q.taking.CompareAndSwap(false, true) {
		return nil
	}
	k := q.taken.Load()
	s := &q.slots[k%floorRing]
	if s.seq.Load() != k+1 {
		q.taking.Store(false)
		return nil
	}
	fn := s.fn
	q.taken.Store(k + 1)
	q.taking.Store(false)
	return fn
}

func BenchmarkSubmitFloor(b *testing.B) {
	b.Run("floor", func(b *testing.B) {
		q := new(floorQueue)
		var stop atomic.Bool
		var workers sync.WaitGroup
		for range runtime.GOMAXPROCS(0) {
			workers.Add(1)
			go func() {
				defer workers.Done()
				for !stop.Load() {
					if fn := q.take(); fn != nil {
						fn()
					} else {
						runtime.Gosched()
					}
				}
			}()
		}
		defer func() { stop.Store(true); workers.Wait() }()
		var wg sync.WaitGroup
		task := func() { wg.Done() }
		submitAll(b, 1, &wg, func() { q.push(task) })
	})
	b.Run("chan", func(b *testing.B) { submitChanPool(b, 1) })
}
