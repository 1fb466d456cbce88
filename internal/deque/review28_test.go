package deque_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/deque"
	"github.com/magpie-go/magpie/internal/testenv"
)

// payload is an element whose contents the owner writes with plain stores
// just before it pushes it, as the runtime fills a node before forking it.
type payload struct {
	id      int
	a, b, c int64
}

// TestStolenContentsArePublished (review rev28; passed on ea2d076, kept
// as a regression test): a thief that steals an element reads the
// contents the owner wrote before pushing it, with no other
// synchronization than the deque's. Elements are fresh, filled with plain
// stores, pushed every way the runtime pushes (PushPrivate, PushLazy,
// Push, then Publish or a pop that serves a request) while the ring grows
// and wraps; the race detector reports a thief's read that the deque did
// not order after the owner's write. The edge: the owner's plain writes,
// then its atomic store of the slot and of bottom (publish); the thief's
// atomic load of bottom, of the ring pointer and of the slot, then its
// CAS of top. (A grown ring's slots are written with plain stores before
// the atomic store of the ring pointer, which orders them before the
// thief's load of the pointer.) Every element is taken exactly once, and
// a torn or stale slot would show as a wrong id or checksum.
func TestStolenContentsArePublished(t *testing.T) {
	rounds, n := 20, 3000
	if testenv.Race {
		rounds = 6
	}
	for _, thieves := range []int{1, 3} {
		t.Run(fmt.Sprintf("thieves=%d", thieves), func(t *testing.T) {
			for r := range rounds {
				publishedRound(t, uint64(r), thieves, n)
			}
		})
	}
}

func publishedRound(t *testing.T, seed uint64, thieves, n int) {
	d := deque.New[payload]()
	taken := make([]atomic.Int32, n)
	var bad atomic.Value
	check := func(x *payload) {
		// Plain reads: ordered after the owner's writes by the deque only.
		if x.a != int64(x.id)*3 || x.b != ^int64(x.id) || x.c != x.a^x.b {
			bad.CompareAndSwap(nil, fmt.Sprintf("element %d read as %+v", x.id, *x))
		}
		taken[x.id].Add(1)
	}
	var done atomic.Bool
	var wg sync.WaitGroup
	for range thieves {
		wg.Go(func() {
			for {
				if x := d.Steal(); x != nil {
					check(x)
					continue
				}
				if done.Load() && d.Steal() == nil {
					return
				}
			}
		})
	}
	rng := rand.New(rand.NewPCG(seed, 28))
	testenv.Within(t, "owner", func() {
		for next := 0; next < n; {
			for burst := 1 + rng.IntN(200); burst > 0 && next < n; burst-- {
				x := &payload{id: next}
				x.a = int64(next) * 3
				x.b = ^int64(next)
				x.c = x.a ^ x.b
				next++
				switch rng.IntN(4) {
				case 0:
					d.Push(x)
				default: // the runtime's fork
					if !d.PushPrivate(x) {
						d.PushLazy(x)
					}
				}
			}
			if rng.IntN(4) == 0 {
				d.Publish()
			}
			for pops := rng.IntN(120); pops > 0; pops-- {
				var x *payload
				if rng.IntN(2) == 0 {
					x = d.Poll()
				} else if x = d.PopPrivate(); x == nil {
					x, _ = d.Pop()
				}
				if x == nil {
					break
				}
				check(x)
			}
		}
		for x, _ := d.Pop(); x != nil; x, _ = d.Pop() {
			check(x)
		}
		done.Store(true)
		wg.Wait()
	})
	require.Nil(t, bad.Load())
	for i := range taken {
		require.EqualValues(t, 1, taken[i].Load(), "element %d", i)
	}
}
