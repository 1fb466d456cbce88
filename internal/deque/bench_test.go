package deque_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/magpie-go/magpie/internal/deque"
)

// BenchmarkPushPop is the owner's un-stolen fork/join path: one push and one
// pop of the same element.
func BenchmarkPushPop(b *testing.B) {
	d := deque.New[int]()
	x := new(int)
	b.ReportAllocs()
	for b.Loop() {
		d.Push(x)
		d.Pop()
	}
}

// BenchmarkPushPopNonEmpty is push+pop above an element that stays in the
// deque, the common case inside a recursion (the outer levels' forks lie
// below): Pop then needs no CAS, unlike on the last element.
func BenchmarkPushPopNonEmpty(b *testing.B) {
	d := deque.New[int]()
	x := new(int)
	d.Push(new(int))
	b.ReportAllocs()
	for b.Loop() {
		d.Push(x)
		d.Pop()
	}
}

// BenchmarkPushSteal pushes and steals on one goroutine: the cost of the
// thief's path (two loads and a CAS) without contention.
func BenchmarkPushSteal(b *testing.B) {
	d := deque.New[int]()
	x := new(int)
	b.ReportAllocs()
	for b.Loop() {
		d.Push(x)
		d.Steal()
	}
}

// BenchmarkPushPopContended is push+pop on the owner while another
// goroutine keeps stealing: the owner's cost when a thief hammers top.
func BenchmarkPushPopContended(b *testing.B) {
	d := deque.New[int]()
	x := new(int)
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			d.Steal()
		}
	}()
	b.ReportAllocs()
	for b.Loop() {
		d.Push(x)
		d.Pop()
	}
	stop.Store(true)
	wg.Wait()
}

// BenchmarkPushPrivatePopPrivate is the runtime's inlined fork/join path:
// a private push and a private pop above a public element (so that no
// publication is asked for), falling back to PushLazy and Pop as the
// runtime does.
func BenchmarkPushPrivatePopPrivate(b *testing.B) {
	d := deque.New[int]()
	x := new(int)
	d.PushLazy(new(int)) // published: the public part is empty
	b.ReportAllocs()
	for b.Loop() {
		if !d.PushPrivate(x) {
			d.PushLazy(x)
		}
		if d.PopPrivate() == nil {
			d.Pop()
		}
	}
}

// BenchmarkPushLazyPop8 is a recursion eight levels deep through the
// non-inlined entry points: eight lazy pushes, then eight pops, all
// private.
func BenchmarkPushLazyPop8(b *testing.B) {
	d := deque.New[int]()
	x := new(int)
	d.PushLazy(new(int))
	b.ReportAllocs()
	for b.Loop() {
		for range 8 {
			d.PushLazy(x)
		}
		for range 8 {
			d.Pop()
		}
	}
}

// BenchmarkPublish16Pop publishes sixteen private elements and pops them
// back from the public part: the cost of a publication (one store per
// element and one of bottom) and of public pops.
func BenchmarkPublish16Pop(b *testing.B) {
	d := deque.New[int]()
	x := new(int)
	d.PushLazy(new(int))
	b.ReportAllocs()
	for b.Loop() {
		for range 16 {
			d.PushLazy(x)
		}
		d.Publish()
		for range 16 {
			d.Pop()
		}
	}
}

// BenchmarkLazyContended is the fork/join fast path while another
// goroutine keeps stealing, and so keeps asking for publications.
func BenchmarkLazyContended(b *testing.B) {
	d := deque.New[int]()
	x := new(int)
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !stop.Load() {
			d.Steal()
		}
	}()
	b.ReportAllocs()
	for b.Loop() {
		if !d.PushPrivate(x) {
			d.PushLazy(x)
		}
		if d.PopPrivate() == nil {
			d.Pop()
		}
	}
	stop.Store(true)
	wg.Wait()
}
