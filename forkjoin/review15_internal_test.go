package forkjoin

import (
	"math/rand/v2"
	"testing"
)

// TestPickAgingBound drives pick with random queue states and checks the
// bound the top of injector.go states: the oldest task of a level is passed
// over by at most aging+1 takes of other levels. A level's oldest task,
// once ready, stays until a take chooses the level; a level may become
// non-empty at any take, and after a take of it may stay non-empty (a new
// oldest task) or not (empty, or its next slot reserved and not ready,
// which pick sees as empty). 200,000 takes for each aging from 1 to 5 and
// 64, with every arrival rate: the bound held (review rev15).
func TestPickAgingBound(t *testing.T) {
	for _, aging := range []int{1, 2, 3, 4, 5, 64} {
		for _, arrive := range []float64{0.05, 0.3, 0.9} {
			q := &injector{aging: aging}
			r := rand.New(rand.NewPCG(uint64(aging), uint64(arrive*100)))
			var nonEmpty uint8
			var passes [NumPriorities]int // takes of other levels since the level's oldest task became ready
			for take := range 200_000 {
				for l := range NumPriorities {
					if nonEmpty&(1<<l) == 0 && r.Float64() < arrive {
						nonEmpty |= 1 << l
						passes[l] = 0
					}
				}
				if nonEmpty == 0 {
					continue
				}
				c := q.pick(nonEmpty)
				if c < 0 || nonEmpty&(1<<c) == 0 {
					t.Fatalf("aging %d take %d: pick(%03b) = %d", aging, take, nonEmpty, c)
				}
				for l := range NumPriorities {
					if l != c && nonEmpty&(1<<l) != 0 {
						passes[l]++
						if passes[l] > aging+1 {
							t.Fatalf("aging %d, arrivals %v, take %d: level %d passed over %d times", aging, arrive, take, l, passes[l])
						}
					}
				}
				if r.Float64() < 0.5 {
					nonEmpty &^= 1 << c // taken, and the level is empty now (or its next slot not ready)
				}
				passes[c] = 0
			}
		}
	}
}
