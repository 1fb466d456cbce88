package deque_test

import (
	"fmt"
	"math/rand"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/deque"
)

// TestConcurrentExactlyOnce lets the owner push, pop and poll while 1, 2 or
// 7 thieves steal, and checks that every element is taken exactly once:
// none lost, none duplicated. Each round starts from a fresh deque so that
// growth of the ring happens under contention again and again; the owner
// pushes in random bursts (some far larger than the initial 64 slots) and
// sometimes drains the deque completely, which is where the owner and the
// thieves race for the last element.
func TestConcurrentExactlyOnce(t *testing.T) {
	rounds, perRound := 40, 4000
	if testing.Short() {
		rounds = 5
	}
	for _, thieves := range []int{1, 2, 7} {
		t.Run(fmt.Sprintf("thieves=%d", thieves), func(t *testing.T) {
			rng := rand.New(rand.NewSource(int64(thieves)))
			var stolen, owned int
			for r := 0; r < rounds; r++ {
				s, o := concurrentRound(t, rng, thieves, perRound)
				stolen += s
				owned += o
			}
			t.Logf("%d elements: %d stolen, %d taken by the owner", rounds*perRound, stolen, owned)
		})
	}
}

// concurrentRound runs one round on a fresh deque and returns how many
// elements the thieves and the owner took.
func concurrentRound(t *testing.T, rng *rand.Rand, thieves, n int) (stolen, owned int) {
	d := deque.New[int]()
	xs := items(n)
	taken := make([]atomic.Int32, n)
	gang := startThieves(d, thieves, taken)
	take := func(x *int) {
		if x != nil {
			taken[*x].Add(1)
			owned++
		}
	}
	next := 0
	for next < n {
		burst := 1 + rng.Intn(8)
		if rng.Intn(8) == 0 {
			burst = 1 + rng.Intn(300) // forces growth if thieves fall behind
		}
		for i := 0; i < burst && next < n; i++ {
			d.Push(xs[next])
			next++
		}
		switch rng.Intn(8) {
		case 0: // drain completely: races for the last element
			for x := pop(d); x != nil; x = pop(d) {
				take(x)
			}
		case 1:
			for i := rng.Intn(burst + 1); i > 0; i-- {
				take(d.Poll())
			}
		default:
			for i := rng.Intn(burst + 1); i > 0; i-- {
				take(pop(d))
			}
		}
	}
	for x := pop(d); x != nil; x = pop(d) {
		take(x)
	}
	stolen = gang.stop()
	requireEachTakenOnce(t, taken, fmt.Sprintf("thieves=%d", thieves))
	require.Equal(t, n, owned+stolen)
	require.Zero(t, d.Len())
	return stolen, owned
}

// thiefGang is a set of goroutines stealing from one deque until stopped,
// counting every element they take.
type thiefGang struct {
	done   atomic.Bool
	stolen atomic.Int64
	wg     sync.WaitGroup
}

// startThieves starts k thieves on d; taken[v] counts the takes of the
// element of value v.
func startThieves(d *deque.Deque[int], k int, taken []atomic.Int32) *thiefGang {
	g := &thiefGang{}
	for range k {
		g.wg.Add(1)
		go func() {
			defer g.wg.Done()
			for {
				if x := d.Steal(); x != nil {
					taken[*x].Add(1)
					g.stolen.Add(1)
					continue
				}
				// Exit only once the owner has finished and a steal found
				// nothing afterwards: a leftover element would be taken
				// here and show up as a double take or not at all.
				if g.done.Load() && d.Steal() == nil {
					return
				}
			}
		}()
	}
	return g
}

// stop tells the thieves the owner has finished, waits for them and
// returns how many elements they took.
func (g *thiefGang) stop() int {
	g.done.Store(true)
	g.wg.Wait()
	return int(g.stolen.Load())
}

// requireEachTakenOnce fails unless every element was taken exactly once.
func requireEachTakenOnce(t *testing.T, taken []atomic.Int32, what string) {
	t.Helper()
	for i := range taken {
		if c := taken[i].Load(); c != 1 {
			require.Failf(t, "element not taken exactly once", "element %d of %d taken %d times (%s)", i, len(taken), c, what)
		}
	}
}

// TestConcurrentPollVersusSteal checks that the owner's Poll, which races
// the thieves at the same end, never duplicates or loses an element.
func TestConcurrentPollVersusSteal(t *testing.T) {
	const n = 20000
	d := deque.New[int]()
	xs := items(n)
	taken := make([]atomic.Int32, n)
	var done atomic.Bool
	var wg sync.WaitGroup
	for k := 0; k < 3; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				if x := d.Steal(); x != nil {
					taken[*x].Add(1)
				} else if done.Load() && d.Steal() == nil {
					return
				}
			}
		}()
	}
	last := -1 // Poll is FIFO: the owner sees increasing values
	for i, x := range xs {
		d.Push(x)
		if i%2 == 1 {
			if y := d.Poll(); y != nil {
				require.Greater(t, *y, last)
				last = *y
				taken[*y].Add(1)
			}
		}
	}
	for y := d.Poll(); y != nil; y = d.Poll() {
		require.Greater(t, *y, last)
		last = *y
		taken[*y].Add(1)
	}
	done.Store(true)
	wg.Wait()
	for i := range taken {
		require.EqualValues(t, 1, taken[i].Load(), "element %d", i)
	}
}
