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
	for _, want := range []int{4, 3, 2, -1} {
		x, published := d.Pop()
		require.Equal(t, want, val(x))
		require.False(t, published)
	}
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
	require.Equal(t, 8, val(pop(d)))
	require.Equal(t, 7, val(pop(d)))
	require.Nil(t, pop(d))
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
		"pop":   pop,
		"poll":  (*deque.Deque[int]).Poll,
		"popif": func(d *deque.Deque[int]) *int {
			if removed, _ := d.PopIf(xs[0]); removed {
				return xs[0]
			}
			return nil
		},
	}
	for name, take := range takeLast {
		t.Run(name, func(t *testing.T) {
			d := deque.New[int]()
			require.False(t, d.PushPrivate(xs[0]), "an empty deque asks for publication")
			require.True(t, d.PushLazy(xs[0]))
			require.Equal(t, 0, val(take(d)), "the last public element")
			require.Equal(t, 0, d.OwnerLen())
			require.True(t, deque.StateOf(d).WantSplit)
			require.False(t, d.PushPrivate(xs[1]), "the public part is empty again")
			require.Equal(t, 0, d.OwnerLen(), "a refused PushPrivate changes nothing")
			require.True(t, d.PushLazy(xs[1]))
			require.Equal(t, 1, d.Len())
			require.True(t, d.PushPrivate(xs[2]), "a public element remains: stay private")
			require.Equal(t, 1, d.Len())
			require.Equal(t, 2, val(d.PopPrivate()))
			require.Nil(t, d.PopPrivate(), "the remaining element is public")
			require.Equal(t, 1, val(pop(d)))
		})
	}
}

// TestSplitGrowth pushes far past the initial ring and private buffer
// privately, with a published prefix, and checks order from both ends.
func TestSplitGrowth(t *testing.T) {
	d := deque.New[int]()
	xs := items(1000)
	for _, x := range xs {
		d.PushLazy(x)
	}
	require.Equal(t, 1000, d.OwnerLen())
	require.Equal(t, 1, d.Len(), "only the oldest is public: growth does not publish")
	require.Equal(t, 0, val(d.Steal()))
	require.Nil(t, d.Steal())
	require.True(t, d.PushLazy(xs[0]), "the public part is empty: publishes 1..999 and this one")
	require.Equal(t, 1000, d.Len())
	require.GreaterOrEqual(t, d.Cap(), 1000)
	for i := 1; i < 500; i++ {
		require.Equal(t, i, val(d.Steal()))
	}
	require.Equal(t, 0, val(pop(d)))
	for i := 999; i >= 500; i-- {
		require.Equal(t, i, val(pop(d)))
	}
	require.Nil(t, pop(d))
}

// TestPopServesRequest is the no-hidden-work rule for pops: the owner
// pushes k elements lazily (the first is published, the others stay
// private), a thief steals the public one and then asks again (finds the
// public part empty). The owner's next pop, by the fast path, declines;
// Pop takes the newest element and publishes the rest, so that the
// thief's next Steal succeeds.
func TestPopServesRequest(t *testing.T) {
	for _, k := range []int{2, 3, 10, 100} {
		t.Run(fmt.Sprintf("k=%d", k), func(t *testing.T) {
			d := deque.New[int]()
			xs := items(k)
			for _, x := range xs {
				d.PushLazy(x)
			}
			require.Equal(t, 1, d.Len())
			require.Equal(t, 0, val(d.Steal()))
			require.Nil(t, d.Steal(), "the thief asks")
			require.Nil(t, d.PopPrivate(), "the fast path leaves a request to Pop")
			require.Equal(t, k-1, d.OwnerLen(), "a declined PopPrivate changes nothing")

			x, published := d.Pop()
			require.Equal(t, k-1, val(x), "Pop is still LIFO")
			if k == 2 {
				// Nothing remains to publish: the request stands for the
				// next push.
				require.False(t, published)
				require.Zero(t, d.OwnerLen())
				require.True(t, deque.StateOf(d).WantSplit)
				require.True(t, d.PushLazy(xs[0]))
				return
			}
			require.True(t, published, "the remaining private elements are published")
			require.Equal(t, k-2, d.Len())
			require.False(t, deque.StateOf(d).WantSplit, "the request is served")
			require.Equal(t, 1, val(d.Steal()), "the thief now finds work")
			require.Nil(t, d.PopPrivate(), "nothing private is left")
			if k > 3 {
				require.Equal(t, k-2, val(pop(d)), "the newest public element")
			} else {
				require.Nil(t, pop(d), "the thief took the only published element")
			}
		})
	}
}

// TestPopIf checks that PopIf removes its argument exactly when it is the
// newest element, private or public, changes nothing otherwise, and serves
// a pending request whether or not it removes anything.
func TestPopIf(t *testing.T) {
	xs := items(6)
	t.Run("empty", func(t *testing.T) {
		d := deque.New[int]()
		removed, published := d.PopIf(xs[0])
		require.False(t, removed)
		require.False(t, published)
	})
	t.Run("private", func(t *testing.T) {
		d := deque.New[int]()
		d.PushLazy(xs[0]) // public
		d.PushLazy(xs[1]) // private
		d.PushLazy(xs[2]) // private
		for _, x := range []*int{xs[0], xs[1], xs[3]} {
			removed, published := d.PopIf(x)
			require.False(t, removed, "%d is not the newest", *x)
			require.False(t, published)
			require.Equal(t, 3, d.OwnerLen())
		}
		removed, published := d.PopIf(xs[2])
		require.True(t, removed)
		require.False(t, published, "no thief asked")
		require.Equal(t, 1, val(d.PopPrivate()))
		require.Equal(t, 1, d.Len())
	})
	t.Run("public", func(t *testing.T) {
		d := deque.New[int]()
		d.PushLazy(xs[0]) // published, and serves the new deque's request
		d.Push(xs[1])
		removed, _ := d.PopIf(xs[0])
		require.False(t, removed)
		removed, _ = d.PopIf(xs[1])
		require.True(t, removed, "the newest public element")
		require.False(t, deque.StateOf(d).WantSplit, "one public element remains")
		removed, _ = d.PopIf(xs[0])
		require.True(t, removed, "the last element, through the CAS")
		require.True(t, deque.StateOf(d).WantSplit, "the public part is empty")
		require.Zero(t, d.OwnerLen())
	})
	t.Run("stolen", func(t *testing.T) {
		d := deque.New[int]()
		d.Push(xs[0])
		require.Same(t, xs[0], d.Steal())
		removed, _ := d.PopIf(xs[0])
		require.False(t, removed, "a stolen element is not removed again")
		require.Zero(t, d.OwnerLen())
	})
	t.Run("serves a request", func(t *testing.T) {
		for _, newest := range []bool{true, false} {
			d := deque.New[int]()
			for _, x := range xs[:4] {
				d.PushLazy(x) // 0 public, 1..3 private
			}
			require.Same(t, xs[0], d.Steal()) // takes the last public element: asks
			x := xs[3]
			if !newest {
				x = xs[1]
			}
			removed, published := d.PopIf(x)
			require.Equal(t, newest, removed)
			require.True(t, published, "PopIf never returns with work hidden")
			require.False(t, deque.StateOf(d).WantSplit)
			require.Same(t, xs[1], d.Steal())
		}
	})
}

// TestFastPathsDeferToRequest: while a thief's request is pending, the
// inlined fast paths do nothing, so that the owner's next push or pop goes
// through PushLazy or Pop, which publish.
func TestFastPathsDeferToRequest(t *testing.T) {
	xs := items(4)
	d := deque.New[int]()
	d.PushLazy(xs[0])
	require.True(t, d.PushPrivate(xs[1]))
	require.True(t, d.PushPrivate(xs[2]))
	require.Same(t, xs[0], d.Steal()) // the last public element: asks
	require.False(t, d.PushPrivate(xs[3]))
	require.Nil(t, d.PopPrivate())
	require.Equal(t, 2, d.OwnerLen(), "declined fast paths change nothing")
	require.Zero(t, d.Len())
	require.True(t, d.PushLazy(xs[3]))
	require.Equal(t, 3, d.Len())
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
				var pending []*int // what the owner pushed and has not popped, oldest first
				take := func(x *int) {
					if x != nil {
						taken[*x].Add(1)
					}
				}
				next := 0
				for next < n {
					for burst := rng.Intn(150); burst > 0 && next < n; burst-- {
						// The runtime's fork: the inlined fast path, then PushLazy.
						if !d.PushPrivate(xs[next]) {
							d.PushLazy(xs[next])
						}
						pending = append(pending, xs[next])
						next++
					}
					for pops := rng.Intn(100); pops > 0; pops-- {
						var x *int
						switch rng.Intn(3) {
						case 0: // the runtime's join: the fast path, then Pop
							if x = d.PopPrivate(); x == nil {
								x, _ = d.Pop()
							}
						case 1:
							x, _ = d.Pop()
						case 2: // join one's own newest fork, unless stolen
							if len(pending) > 0 {
								if removed, _ := d.PopIf(pending[len(pending)-1]); removed {
									x = pending[len(pending)-1]
								}
							}
						}
						if x == nil {
							// Empty: thieves took everything (they take
							// the oldest first, so also the newest).
							pending = pending[:0]
							continue
						}
						require.Same(t, pending[len(pending)-1], x, "the owner pops LIFO")
						pending = pending[:len(pending)-1]
						take(x)
					}
					if rng.Intn(10) == 0 {
						d.Publish()
					}
				}
				for x := pop(d); x != nil; x = pop(d) {
					take(x)
				}
				gang.stop()
				requireEachTakenOnce(t, taken, fmt.Sprintf("round %d", r))
			}
		})
	}
}

// FuzzSplitOwnerOps checks a random sequence of owner operations, lazy and
// eager pushes, the fast paths, pops, PopIf, polls, publications and
// (single-goroutine) steals, against a slice model: the deque's elements,
// in order, with the number of them that are public, and whether a thief
// asked for work (wantSplit: it found the public part empty, or someone
// took its last element). After every operation it checks the model
// against the deque, and the invariants that hold at rest: wantSplit == 0
// implies a non-empty public part, and so private elements imply a
// non-empty public part or a pending request.
func FuzzSplitOwnerOps(f *testing.F) {
	f.Add([]byte{0, 0, 0, 2, 2, 2, 2})
	f.Add([]byte{0, 5, 0, 0, 5, 1, 5, 0, 4, 3, 2})
	f.Add([]byte{1, 1, 0, 0, 0, 3, 3, 4, 5, 5, 2, 2, 2, 2})
	f.Add([]byte{0, 6, 6, 6, 4, 7, 7, 2, 8, 17, 0, 4, 4, 8})
	f.Add([]byte{0, 0, 0, 0, 4, 4, 17, 6, 7, 8, 2, 2})
	f.Fuzz(func(t *testing.T, ops []byte) {
		d := deque.New[int]()
		var model []int // oldest first
		public := 0     // model[:public] are visible to thieves
		want := true    // wantSplit (a new deque asks)
		xs := items(len(ops) + 1)
		next := 0
		// publishIfAsked is the model of a pop that may serve a request.
		publishIfAsked := func() bool {
			if want && public < len(model) {
				public, want = len(model), false
				return true
			}
			return false
		}
		// takeTop is the model of the top element leaving: whoever takes
		// the last public element asks for work.
		takeTop := func() int {
			x := model[0]
			model, public = model[1:], public-1
			want = want || public == 0
			return x
		}
		for k, op := range ops {
			switch op % 9 {
			case 0: // PushLazy
				got := d.PushLazy(xs[next])
				model = append(model, next)
				next++
				require.Equal(t, want, got, "op %d: PushLazy publishes iff asked", k)
				if want {
					public, want = len(model), false
				}
			case 1: // Push
				d.Push(xs[next])
				model = append(model, next)
				next++
				public = len(model)
			case 2: // Pop
				x, published := d.Pop()
				if len(model) == 0 {
					require.Nil(t, x)
					require.False(t, published)
					continue
				}
				require.Equal(t, model[len(model)-1], val(x), "op %d: Pop", k)
				model = model[:len(model)-1]
				if public > len(model) { // took a public element
					public = len(model)
					want = want || public == 0
					require.False(t, published)
				} else {
					require.Equal(t, publishIfAsked(), published, "op %d: Pop publishes", k)
				}
			case 3: // Poll
				d.Publish()
				public = len(model)
				x := d.Poll()
				if len(model) == 0 {
					require.Nil(t, x)
					continue
				}
				require.Equal(t, takeTop(), val(x), "op %d: Poll", k)
			case 4: // Steal
				x := d.Steal()
				if public == 0 {
					require.Nil(t, x)
					want = true
					continue
				}
				require.Equal(t, takeTop(), val(x), "op %d: Steal", k)
			case 5: // Publish
				require.Equal(t, public < len(model), d.Publish())
				public = len(model)
			case 6: // PushPrivate
				s := deque.StateOf(d)
				ok := d.PushPrivate(xs[next])
				require.Equal(t, !want && s.Private < s.PrivateCap, ok, "op %d: PushPrivate", k)
				if ok {
					model = append(model, next)
					next++
				}
			case 7: // PopPrivate
				x := d.PopPrivate()
				if want || public == len(model) {
					require.Nil(t, x, "op %d: PopPrivate", k)
					continue
				}
				require.Equal(t, model[len(model)-1], val(x), "op %d: PopPrivate", k)
				model = model[:len(model)-1]
			case 8: // PopIf, of the newest element (op/9 even) or another
				x := xs[next] // never pushed
				newest := (op/9)%2 == 0 && len(model) > 0
				if newest {
					x = xs[model[len(model)-1]]
				} else if len(model) > 1 {
					x = xs[model[len(model)-2]]
				}
				removed, published := d.PopIf(x)
				require.Equal(t, newest, removed, "op %d: PopIf", k)
				if newest {
					model = model[:len(model)-1]
					if public > len(model) { // took a public element
						public = len(model)
						want = want || public == 0
					}
				}
				require.Equal(t, publishIfAsked(), published, "op %d: PopIf publishes", k)
			}
			s := deque.StateOf(d)
			require.Equal(t, len(model), d.OwnerLen(), "op %d", k)
			require.Equal(t, public, d.Len(), "op %d", k)
			require.Equal(t, len(model)-public, s.Private, "op %d", k)
			require.Equal(t, want, s.WantSplit, "op %d", k)
			require.True(t, s.WantSplit || s.Bottom > s.Top, "op %d: wantSplit == 0 with an empty public part", k)
		}
	})
}

var stress = flag.Duration("deque.stress", 0,
	"run TestStressExactlyOnce for this long (e.g. -deque.stress=10s); 0 skips it")

// TestStressExactlyOnce is the long form of the exactly-once tests, behind
// -deque.stress: for the given duration, an owner mixing every owner
// operation (eager and lazy pushes, fast-path and slow pops, polls,
// publications) races 7 thieves, round after round on fresh deques, and
// every element must be taken exactly once.
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
					x := d.PopPrivate()
					if x == nil {
						x, _ = d.Pop()
					}
					if x != nil {
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
		for x := pop(d); x != nil; x = pop(d) {
			taken[*x].Add(1)
		}
		stolen += gang.stop()
		requireEachTakenOnce(t, taken, fmt.Sprintf("round %d", rounds))
		rounds++
		elements += n
	}
	t.Logf("%d rounds, %d elements, %d stolen: every element taken exactly once", rounds, elements, stolen)
}
