package ring_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/ring"
	"github.com/magpie-go/magpie/internal/testenv"
)

func items(n int) []*int {
	xs := make([]*int, n)
	for i := range xs {
		v := i
		xs[i] = &v
	}
	return xs
}

// TestRingOrder: Push, Fill and Pop keep push order, Push refuses a full
// ring, Fill past capacity panics, and Len counts.
func TestRingOrder(t *testing.T) {
	var r ring.Ring[int]
	require.Nil(t, r.Pop())
	xs := items(ring.Cap + 1)
	for i, x := range xs[:ring.Cap] {
		require.True(t, r.Push(x), "push %d", i)
	}
	require.False(t, r.Push(xs[ring.Cap]), "full")
	require.Equal(t, ring.Cap, r.Len())
	require.Panics(t, func() { r.Fill(xs[:1]) })
	for i := range ring.Cap {
		require.Same(t, xs[i], r.Pop())
	}
	require.Nil(t, r.Pop())
	r.Fill(xs[:10]) // the slots wrap around from here on
	r.Fill(xs[10:ring.Cap])
	for i := range ring.Cap {
		require.Same(t, xs[i], r.Pop())
	}
	require.Zero(t, r.Len())
}

// TestRingStealHalf: a thief takes the older half, rounded up: the oldest
// returned, the rest in its own ring in order; with no ring of its own,
// the oldest alone.
func TestRingStealHalf(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 32, ring.Cap} {
		var r, dst ring.Ring[int]
		xs := items(n)
		r.Fill(xs)
		got := r.StealHalf(&dst)
		require.Same(t, xs[0], got, "n=%d", n)
		taken := n - n/2
		require.Equal(t, taken-1, dst.Len(), "n=%d", n)
		for i := 1; i < taken; i++ {
			require.Same(t, xs[i], dst.Pop(), "n=%d", n)
		}
		require.Equal(t, n-taken, r.Len(), "n=%d", n)
		if n-taken > 0 {
			require.Same(t, xs[taken], r.StealHalf(nil), "n=%d: the oldest alone", n)
			require.Equal(t, n-taken-1, r.Len())
		}
	}
	var r ring.Ring[int]
	require.Nil(t, r.StealHalf(nil))
}

// TestRingConcurrentExactlyOnce: the owner fills, pops and drops taken
// slots while three thieves steal halves into their own rings and pop
// those: every item is taken exactly once, and each consumer takes its
// items in push order.
func TestRingConcurrentExactlyOnce(t *testing.T) {
	total := 200_000
	if testenv.Race {
		total = 20_000
	}
	xs := items(total)
	taken := make([]atomic.Int32, total)
	var owner ring.Ring[int]
	var stop atomic.Bool
	var thieves sync.WaitGroup
	orderOK := func(last *int, x *int) bool {
		ok := *x > *last
		*last = *x
		return ok
	}
	for range 3 {
		thieves.Add(1)
		go func() {
			defer thieves.Done()
			var mine ring.Ring[int]
			last := -1
			for !stop.Load() || owner.Len() > 0 {
				x := owner.StealHalf(&mine)
				if x == nil {
					runtime.Gosched()
					continue
				}
				for ; x != nil; x = mine.Pop() {
					taken[*x].Add(1)
					if !orderOK(&last, x) {
						t.Errorf("thief took %d after %d", *x, last)
						return
					}
				}
			}
		}()
	}
	last := -1
	next := 0
	for next < total {
		if owner.Len() == 0 {
			k := min(1+next%ring.Cap/2, total-next)
			owner.Fill(xs[next : next+k])
			next += k
		}
		if x := owner.Pop(); x != nil {
			taken[*x].Add(1)
			if !orderOK(&last, x) {
				t.Fatalf("owner took %d after %d", *x, last)
			}
			if *x%7 == 0 {
				owner.DropTaken() // while thieves read: none may take a cleared slot
			}
		}
	}
	stop.Store(true)
	testenv.Within(t, "thieves", thieves.Wait)
	for x := owner.Pop(); x != nil; x = owner.Pop() {
		taken[*x].Add(1)
	}
	for i := range taken {
		require.Equal(t, int32(1), taken[i].Load(), "item %d", i)
	}
}

// FuzzRingOps: a sequence of Push, Fill, Pop and StealHalf on one
// goroutine matches a slice model, and Peek returns its oldest item.
func FuzzRingOps(f *testing.F) {
	f.Add([]byte{0, 0, 1, 2, 3, 0, 2})
	f.Add([]byte{3, 3, 3, 3, 3, 1, 1, 2, 2, 0})
	f.Add([]byte{0, 0, 0, 2, 255, 2, 3, 255, 0, 2})
	f.Fuzz(func(t *testing.T, ops []byte) {
		var r, dst ring.Ring[int]
		var model []int
		next := 0
		mk := func() *int { v := next; next++; return &v }
		for _, op := range ops {
			if op == 255 {
				r.DropTaken() // changes nothing a consumer sees
				continue
			}
			switch op % 4 {
			case 0:
				x := mk()
				ok := r.Push(x)
				assert.Equal(t, len(model) < ring.Cap, ok)
				if ok {
					model = append(model, *x)
				}
			case 1:
				k := int(op/4) % 8
				if len(model)+k > ring.Cap {
					continue
				}
				xs := make([]*int, k)
				for i := range xs {
					xs[i] = mk()
					model = append(model, *xs[i])
				}
				r.Fill(xs)
			case 2:
				x := r.Pop()
				if len(model) == 0 {
					require.Nil(t, x)
					continue
				}
				require.NotNil(t, x)
				require.Equal(t, model[0], *x)
				model = model[1:]
			case 3:
				for dst.Pop() != nil {
				}
				x := r.StealHalf(&dst)
				if len(model) == 0 {
					require.Nil(t, x)
					continue
				}
				k := len(model) - len(model)/2
				require.Equal(t, model[0], *x)
				for i := 1; i < k; i++ {
					y := dst.Pop()
					require.NotNil(t, y)
					require.Equal(t, model[i], *y)
				}
				model = model[k:]
			}
			require.Equal(t, len(model), r.Len())
			if len(model) == 0 {
				require.Nil(t, r.Peek())
			} else {
				require.Equal(t, model[0], *r.Peek(), "Peek: the oldest, left in place")
			}
		}
	})
}

// TestRingPeekConcurrent: Peek from other goroutines while the owner
// pushes, pops and clears taken slots (DropTaken, as a worker going idle
// does while another's take looks at its ring under the take lock:
// forkjoin's oldestBatch) returns the item at the head at some instant
// of the call: never nil while the ring holds an item throughout, never
// an item already popped when the call began, never one not yet pushed
// when it ended (review rev34).
func TestRingPeekConcurrent(t *testing.T) {
	const n = 200_000
	var (
		r      ring.Ring[int]
		popped atomic.Int64 // the last item popped (0: none)
		pushed atomic.Int64 // the last item about to be pushed
		stop   atomic.Bool
	)
	vals := make([]int, n+1)
	for i := range vals {
		vals[i] = i
	}
	pushed.Store(1)
	require.True(t, r.Push(&vals[1]))
	testenv.Concurrently(t, "owner and peekers", 3, func(g int) {
		if g == 0 {
			defer stop.Store(true)
			for i := 2; i <= n; i++ {
				pushed.Store(int64(i))
				for !r.Push(&vals[i]) {
					popped.Store(int64(*r.Pop())) // full: the ring holds Cap items, more than one
				}
				for k := i % 3; k > 0 && r.Len() > 1; k-- {
					popped.Store(int64(*r.Pop()))
				}
				if i%7 == 0 {
					r.DropTaken()
				}
			}
			return
		}
		for !stop.Load() {
			lo := popped.Load()
			x := r.Peek()
			hi := pushed.Load()
			if !assert.NotNil(t, x, "Peek of a ring never empty") {
				return
			}
			if !assert.True(t, int64(*x) > lo && int64(*x) <= hi, "Peek %d outside (%d, %d]", *x, lo, hi) {
				return
			}
		}
	})
}
