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
