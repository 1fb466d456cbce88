package deque_test

import (
	"flag"
	"fmt"
	"math/rand"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/deque"
)

// TestSplitSemantics walks the split deque through its states: lazy pushes
// stay private until a thief finds the public part empty, the next lazy push
// then publishes everything, and the owner always sees every element.
func TestSplitSemantics(t *testing.T) {
	d := deque.New[int]()
	xs := items(10)

	require.True(t, d.PushLazy(xs[0]), "an empty public part is always filled")
	require.False(t, d.PushLazy(xs[1]))
	require.False(t, d.PushLazy(xs[2]))
	require.Equal(t, 1, d.Len(), "thieves see only the published element")
	require.Equal(t, 3, d.OwnerLen())

	require.Equal(t, 0, val(d.Steal()))
	require.Nil(t, d.Steal(), "private elements are not stealable")
	require.Equal(t, 2, d.OwnerLen())

	// The public part is empty: the next lazy push publishes all.
	require.True(t, d.PushLazy(xs[3]))
	require.Equal(t, 3, d.Len())
	require.False(t, d.PushLazy(xs[4]), "public elements remain")
	require.Equal(t, 1, val(d.Steal()), "thieves take the oldest")

	// The owner pops private elements first, then public ones, LIFO.
	require.Equal(t, 4, val(d.Pop()))
	require.Equal(t, 3, val(d.Pop()))
	require.Equal(t, 2, val(d.Pop()))
	require.Nil(t, d.Pop())
	require.Equal(t, 0, d.OwnerLen())

	// Publish and Poll make private elements visible.
	d.PushLazy(xs[5]) // published: the public part is empty
	d.PushLazy(xs[6])
	d.PushLazy(xs[7])
	d.Publish()
	require.Equal(t, d.OwnerLen(), d.Len())
	require.False(t, d.Publish(), "nothing left to publish")
	require.Equal(t, 5, val(d.Poll()))
	d.PushLazy(xs[8])
	require.Equal(t, 6, val(d.Poll()), "Poll publishes and takes the oldest")
	require.Equal(t, 8, val(d.Pop()))
	require.Equal(t, 7, val(d.Pop()))
	require.Nil(t, d.Pop())
	require.Nil(t, d.Poll())
}

// TestSplitEmptiedPublicPart checks the rule behind PushPrivate's one-load
// fast path: whoever takes the last public element (a thief, or the owner
// popping or polling it) leaves the deque asking for a publication, so the
// next lazy push fills the public part again without a thief having to find
// it empty first.
func TestSplitEmptiedPublicPart(t *testing.T) {
	xs := items(8)
	takeLast := map[string]func(d *deque.Deque[int]) *int{
		"steal": (*deque.Deque[int]).Steal,
		"pop":   (*deque.Deque[int]).Pop,
		"poll":  (*deque.Deque[int]).Poll,
	}
	for name, take := range takeLast {
		t.Run(name, func(t *testing.T) {
			d := deque.New[int]()
			require.False(t, d.PushPrivate(xs[0]), "an empty deque asks for publication")
			require.True(t, d.PushLazy(xs[0]))
			require.Equal(t, 0, val(take(d)), "the last public element")
			require.Equal(t, 0, d.OwnerLen())
			require.False(t, d.PushPrivate(xs[1]), "the public part is empty again")
			require.Equal(t, 0, d.OwnerLen(), "a refused PushPrivate changes nothing")
			require.True(t, d.PushLazy(xs[1]))
			require.Equal(t, 1, d.Len())
			require.True(t, d.PushPrivate(xs[2]), "a public element remains: stay private")
			require.Equal(t, 1, d.Len())
			require.Equal(t, 2, val(d.PopPrivate()))
			require.Nil(t, d.PopPrivate(), "the remaining element is public")
			require.Equal(t, 1, val(d.Pop()))
		})
	}
}

// TestSplitGrowth pushes far past the initial ring privately, with a
// published prefix, and checks order from both ends.
func TestSplitGrowth(t *testing.T) {
	d := deque.New[int]()
	xs := items(1000)
	for _, x := range xs {
		d.PushLazy(x)
	}
	require.Equal(t, 1000, d.OwnerLen())
	require.Equal(t, 1, d.Len(), "only the oldest is public")
	require.Equal(t, 0, val(d.Steal()))
	require.Nil(t, d.Steal())
	d.PushLazy(xs[0]) // the public part is empty: publishes 1..999 and this one
	require.Equal(t, 1000, d.Len())
	for i := 1; i < 500; i++ {
		require.Equal(t, i, val(d.Steal()))
	}
	require.Equal(t, 0, val(d.Pop()))
	for i := 999; i >= 500; i-- {
		require.Equal(t, i, val(d.Pop()))
	}
	require.Nil(t, d.Pop())
}

// TestSplitConcurrentExactlyOnce: the owner pushes lazily and pops while
// 1, 2 and 7 thieves steal (and so keep asking for publication); every
// element must be taken exactly once.
func TestSplitConcurrentExactlyOnce(t *testing.T) {
	rounds, n := 30, 4000
	if testing.Short() {
		rounds = 5
	}
	for _, thieves := range []int{1, 2, 7} {
		t.Run(fmt.Sprintf("thieves=%d", thieves), func(t *testing.T) {
			rng := rand.New(rand.NewSource(int64(thieves)))
			for r := 0; r < rounds; r++ {
				d := deque.New[int]()
				xs := items(n)
				taken := make([]atomic.Int32, n)
				gang := startThieves(d, thieves, taken)
				next := 0
				for next < n {
					for burst := rng.Intn(150); burst > 0 && next < n; burst-- {
						d.PushLazy(xs[next])
						next++
					}
					for pops := rng.Intn(100); pops > 0; pops-- {
						if x := d.Pop(); x != nil {
							taken[*x].Add(1)
						}
					}
					if rng.Intn(10) == 0 {
						d.Publish()
					}
				}
				for x := d.Pop(); x != nil; x = d.Pop() {
					taken[*x].Add(1)
				}
				gang.stop()
				requireEachTakenOnce(t, taken, fmt.Sprintf("round %d", r))
			}
		})
	}
}

// FuzzSplitOwnerOps checks a random sequence of owner operations, lazy and
// eager pushes, pops, polls, publications and (single-goroutine) steals,
// against a slice model: the deque's elements, in order, with the number
// of them that are public, and whether the next lazy push publishes (a
// thief found the public part empty, or someone took its last element).
func FuzzSplitOwnerOps(f *testing.F) {
	f.Add([]byte{0, 0, 0, 2, 2, 2, 2})
	f.Add([]byte{0, 5, 0, 0, 5, 1, 5, 0, 4, 3, 2})
	f.Add([]byte{1, 1, 0, 0, 0, 3, 3, 4, 5, 5, 2, 2, 2, 2})
	f.Fuzz(func(t *testing.T, ops []byte) {
		d := deque.New[int]()
		var model []int // oldest first
		public := 0     // model[:public] are visible to thieves
		want := true    // the next lazy push publishes (a new deque asks)
		xs := items(len(ops) + 1)
		next := 0
		for _, op := range ops {
			switch op % 6 {
			case 0: // PushLazy
				got := d.PushLazy(xs[next])
				model = append(model, next)
				next++
				require.Equal(t, want, got)
				if want {
					public, want = len(model), false
				}
			case 1: // Push
				d.Push(xs[next])
				model = append(model, next)
				next++
				public = len(model)
			case 2: // Pop
				x := d.Pop()
				if len(model) == 0 {
					require.Nil(t, x)
					continue
				}
				require.Equal(t, model[len(model)-1], val(x))
				model = model[:len(model)-1]
				if public > len(model) { // took a public element
					public = len(model)
					want = want || public == 0
				}
			case 3: // Poll
				d.Publish()
				public = len(model)
				x := d.Poll()
				if len(model) == 0 {
					require.Nil(t, x)
					continue
				}
				require.Equal(t, model[0], val(x))
				model, public = model[1:], public-1
				want = want || public == 0
			case 4: // Steal
				x := d.Steal()
				if public == 0 {
					require.Nil(t, x)
					want = true
					continue
				}
				require.Equal(t, model[0], val(x))
				model, public = model[1:], public-1
				want = want || public == 0
			case 5: // Publish
				require.Equal(t, public < len(model), d.Publish())
				public = len(model)
			}
			require.Equal(t, len(model), d.OwnerLen())
			require.Equal(t, public, d.Len())
		}
	})
}

var stress = flag.Duration("deque.stress", 0,
	"run TestStressExactlyOnce for this long (e.g. -deque.stress=10s); 0 skips it")

// TestStressExactlyOnce is the long form of the exactly-once tests, behind
// -deque.stress: for the given duration, an owner mixing every owner
// operation (eager and lazy pushes, pops, polls, publications) races 7
// thieves, round after round on fresh deques, and every element must be
// taken exactly once.
func TestStressExactlyOnce(t *testing.T) {
	if *stress == 0 {
		t.Skip("long stress test: run with -deque.stress=10s")
	}
	deadline := time.Now().Add(*stress)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	var rounds, elements, stolen int
	for time.Now().Before(deadline) {
		const n, thieves = 20000, 7
		d := deque.New[int]()
		xs := items(n)
		taken := make([]atomic.Int32, n)
		gang := startThieves(d, thieves, taken)
		next := 0
		for next < n {
			switch rng.Intn(6) {
			case 0, 1:
				for b := rng.Intn(200); b > 0 && next < n; b-- {
					d.PushLazy(xs[next])
					next++
				}
			case 2:
				for b := rng.Intn(50); b > 0 && next < n; b-- {
					d.Push(xs[next])
					next++
				}
			case 3:
				for p := rng.Intn(150); p > 0; p-- {
					if x := d.Pop(); x != nil {
						taken[*x].Add(1)
					}
				}
			case 4:
				if x := d.Poll(); x != nil {
					taken[*x].Add(1)
				}
			case 5:
				d.Publish()
			}
		}
		for x := d.Pop(); x != nil; x = d.Pop() {
			taken[*x].Add(1)
		}
		stolen += gang.stop()
		requireEachTakenOnce(t, taken, fmt.Sprintf("round %d", rounds))
		rounds++
		elements += n
	}
	t.Logf("%d rounds, %d elements, %d stolen: every element taken exactly once", rounds, elements, stolen)
}
