package deque_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/magpie-go/magpie/internal/deque"
)

// items returns n distinct pointers whose values are 0..n-1, so that a test
// can tell elements apart by value and by identity.
func items(n int) []*int {
	xs := make([]*int, n)
	for i := range xs {
		v := i
		xs[i] = &v
	}
	return xs
}

// val dereferences x, or returns -1 for nil, so that expectations read as
// plain integers.
func val(x *int) int {
	if x == nil {
		return -1
	}
	return *x
}

// pop is Pop without its publication report, for tests that publish nothing
// lazily (or do not care).
func pop(d *deque.Deque[int]) *int {
	x, _ := d.Pop()
	return x
}

// TestSequential runs scripted owner and thief operations on one goroutine
// and checks every returned element against the deque's documented order:
// Pop is LIFO at the bottom, Poll and Steal are FIFO at the top.
func TestSequential(t *testing.T) {
	type op struct {
		name string // "push", "pop", "poll", "steal"
		want int    // value returned by pop/poll/steal; -1 for nil
	}
	push := func() op { return op{name: "push"} }
	popped := func(want int) op { return op{"pop", want} }
	poll := func(want int) op { return op{"poll", want} }
	steal := func(want int) op { return op{"steal", want} }

	tests := []struct {
		name string
		ops  []op // pushes push 0, 1, 2, ... in order
		len  int  // Len after the script
	}{
		{"empty pop", []op{popped(-1), popped(-1)}, 0},
		{"empty poll", []op{poll(-1)}, 0},
		{"empty steal", []op{steal(-1)}, 0},
		{"push pop", []op{push(), popped(0), popped(-1)}, 0},
		{"pop is LIFO", []op{push(), push(), push(), popped(2), popped(1), popped(0), popped(-1)}, 0},
		{"poll is FIFO", []op{push(), push(), push(), poll(0), poll(1), poll(2), poll(-1)}, 0},
		{"steal is FIFO", []op{push(), push(), push(), steal(0), steal(1), steal(2), steal(-1)}, 0},
		{"both ends", []op{push(), push(), push(), push(), steal(0), popped(3), poll(1), popped(2), popped(-1), steal(-1)}, 0},
		{"last element by pop after steals", []op{push(), push(), steal(0), popped(1), steal(-1)}, 0},
		{"last element by steal after pop", []op{push(), push(), popped(1), steal(0), popped(-1)}, 0},
		{"reuse after empty", []op{push(), popped(0), push(), push(), steal(1), popped(2), push(), poll(3)}, 0},
		{"len counts what is left", []op{push(), push(), push(), popped(2)}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := deque.New[int]()
			xs := items(len(tc.ops))
			next := 0
			for k, o := range tc.ops {
				var got *int
				switch o.name {
				case "push":
					d.Push(xs[next])
					next++
					continue
				case "pop":
					got = pop(d)
				case "poll":
					got = d.Poll()
				case "steal":
					got = d.Steal()
				}
				require.Equal(t, o.want, val(got), "op %d (%s)", k, o.name)
				if got != nil {
					require.Same(t, xs[*got], got, "op %d returned a different pointer", k)
				}
			}
			require.Equal(t, tc.len, d.Len())
		})
	}
}

// TestGrowthKeepsOrder pushes far past the initial 64 slots, with the live
// window not starting at index 0 (so the copy wraps around the old ring),
// and checks that every element comes back, in order, from both ends.
func TestGrowthKeepsOrder(t *testing.T) {
	const n = 1000
	for _, offset := range []int{0, 1, 37, 63, 64, 100} {
		d := deque.New[int]()
		require.Equal(t, 64, d.Cap(), "initial capacity")
		// Move top and bottom to offset so that the live window straddles
		// the end of the ring when it grows.
		pad := items(offset)
		for _, x := range pad {
			d.Push(x)
			require.Same(t, x, d.Steal())
		}
		xs := items(n)
		for i, x := range xs {
			d.Push(x)
			require.Equal(t, i+1, d.Len())
		}
		require.GreaterOrEqual(t, d.Cap(), n)
		require.Zero(t, d.Cap()&(d.Cap()-1), "capacity %d is not a power of two", d.Cap())
		// Take the first half from the top, the rest from the bottom.
		for i := 0; i < n/2; i++ {
			require.Same(t, xs[i], d.Steal(), "offset %d, steal %d", offset, i)
		}
		for i := n - 1; i >= n/2; i-- {
			require.Same(t, xs[i], pop(d), "offset %d, pop %d", offset, i)
		}
		require.Nil(t, pop(d))
		require.Nil(t, d.Steal())
		require.Zero(t, d.Len())
	}
}

// TestGrowWhileNonEmptyAtTop grows the ring several times with elements
// stolen in between, so that each copy starts at a different top index.
func TestGrowWhileNonEmptyAtTop(t *testing.T) {
	d := deque.New[int]()
	xs := items(5000)
	var model []*int // live elements, top first
	for i, x := range xs {
		d.Push(x)
		model = append(model, x)
		if i%3 == 0 {
			require.Same(t, model[0], d.Steal())
			model = model[1:]
		}
	}
	require.Equal(t, len(model), d.Len())
	for _, x := range model {
		require.Same(t, x, d.Poll())
	}
	require.Nil(t, d.Poll())
}

// TestCapDoesNotShrink documents that the ring keeps its size once grown:
// that is what makes later pushes allocation-free.
func TestCapDoesNotShrink(t *testing.T) {
	d := deque.New[int]()
	for _, x := range items(200) {
		d.Push(x)
	}
	c := d.Cap()
	require.Equal(t, 256, c)
	for pop(d) != nil {
	}
	require.Equal(t, c, d.Cap())
	require.Zero(t, d.Len())
}

// TestZeroAllocs checks that push, pop, poll and steal allocate nothing
// once the ring is large enough.
func TestZeroAllocs(t *testing.T) {
	d := deque.New[int]()
	xs := items(256)
	for _, x := range xs {
		d.Push(x)
	}
	for pop(d) != nil {
	}
	x := xs[0]
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		d.Push(x)
		d.Pop()
	}), "push+pop")
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		d.Push(x)
		d.Steal()
	}), "push+steal")
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		d.Push(x)
		d.Poll()
	}), "push+poll")
	require.Zero(t, testing.AllocsPerRun(100, func() {
		for _, x := range xs {
			d.Push(x)
		}
		for d.Steal() != nil {
		}
	}), "a full ring of pushes, then steals")
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		d.Pop()
		d.Steal()
		d.Poll()
		_ = d.Len()
	}), "operations on an empty deque")
}
