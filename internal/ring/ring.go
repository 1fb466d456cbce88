// Package ring is a bounded single-producer, multi-consumer queue of
// pointers: its owner pushes at the tail and pops at the head, and other
// goroutines steal half of it from the head. It is the shape of the Go
// runtime's per-P run queue (runq in runtime/proc.go): forkjoin keeps in
// one the submitted tasks a worker took from the submission queue in a
// batch, so that idle workers can still take them.
//
// Invariants:
//
//   - Only the owner writes tail and the slots; a slot k (mod Cap) is
//     written only while head > k-Cap, so never while a consumer may still
//     take its previous value.
//   - head only grows, by a compare-and-swap of its owner or of a thief;
//     a consumer reads the slots it takes before the compare-and-swap
//     that takes them, so a slot overwritten meanwhile (the head moved on
//     and the owner pushed again) makes that compare-and-swap fail.
//   - Items leave in push order: the owner's Pop and a thief's StealHalf
//     both take from the head.
//
// Every access to head, tail and the slots is atomic, so the race
// detector sees the same program as every other build.
package ring

import "sync/atomic"

// Cap is the number of items a ring holds.
const Cap = 64

// Ring is a bounded SPMC queue of *T; the zero value is an empty ring.
// Push, Fill, DropTaken and Pop are its owner's; StealHalf (into a ring
// the caller owns, or none) and Len are anyone's.
type Ring[T any] struct {
	head  atomic.Uint32 // next item to take; consumers advance it by CAS
	_     [120]byte     // head is written by thieves, tail by the owner alone
	tail  atomic.Uint32 // next slot to fill; written by the owner only
	slots [Cap]atomic.Pointer[T]
}

// Len returns the number of items in r; from a goroutine other than the
// owner, a snapshot that may be stale at once.
func (r *Ring[T]) Len() int {
	for {
		h := r.head.Load()
		t := r.tail.Load()
		if r.head.Load() == h { // a consistent pair: t was read while head was h
			return int(t - h)
		}
	}
}

// Push appends x (not nil) and reports true, or reports false if r is
// full. Owner only.
func (r *Ring[T]) Push(x *T) bool {
	t := r.tail.Load() // only the owner writes it
	if t-r.head.Load() >= Cap {
		return false
	}
	r.slots[t%Cap].Store(x)
	r.tail.Store(t + 1) // publishes the slot
	return true
}

// Fill appends xs (none nil), which must fit. Owner only.
func (r *Ring[T]) Fill(xs []*T) {
	t := r.tail.Load() // only the owner writes it
	if int(t-r.head.Load())+len(xs) > Cap {
		panic("ring: Fill past capacity")
	}
	for i, x := range xs {
		r.slots[(t+uint32(i))%Cap].Store(x)
	}
	r.tail.Store(t + uint32(len(xs))) // publishes the slots
}

// DropTaken clears the slots of items already taken, so that r keeps no
// pointer to them and the GC may have them (a Pop leaves its slot as it
// is: clearing it there would cost a locked store per item). Owner only.
// A thief that read one of these slots before it was cleared, with a
// head that has moved on since, fails its compare-and-swap, so no one
// takes the nil.
func (r *Ring[T]) DropTaken() {
	h := r.head.Load() // thieves may move it on: the slots freed after this load stay
	t := r.tail.Load() // only the owner writes it
	for i := t; i != h+Cap; i++ {
		if s := &r.slots[i%Cap]; s.Load() != nil {
			s.Store(nil)
		}
	}
}

// Peek returns the oldest item without removing it, or nil if r is
// empty; from a goroutine other than the owner, a snapshot: the item may
// be taken at once. It returns an item only if the head did not move
// while it read the slot, so the item is the one at the head then (the
// owner overwrites a slot only once the head has passed it).
func (r *Ring[T]) Peek() *T {
	for {
		h := r.head.Load()
		if h == r.tail.Load() {
			return nil
		}
		x := r.slots[h%Cap].Load()
		if r.head.Load() == h {
			return x
		}
	}
}

// Pop removes and returns the oldest item, or nil if r is empty. Owner
// only.
func (r *Ring[T]) Pop() *T {
	for {
		h := r.head.Load()
		if h == r.tail.Load() {
			return nil
		}
		x := r.slots[h%Cap].Load()
		if r.head.CompareAndSwap(h, h+1) {
			return x
		}
	}
}

// StealHalf takes the older half of r's items (rounded up): it returns
// the oldest and appends the others, in order, to dst, which must be
// empty and owned by the calling goroutine; with dst nil it takes the
// oldest item alone. It returns nil if r is empty.
func (r *Ring[T]) StealHalf(dst *Ring[T]) *T {
	for {
		h := r.head.Load()
		t := r.tail.Load()
		n := t - h
		if int32(n) <= 0 || n > Cap {
			// Empty, or tail read after further pops and pushes: look again
			// unless empty.
			if n == 0 || int32(n) < 0 {
				return nil
			}
			continue
		}
		n -= n / 2
		if dst == nil {
			n = 1
		}
		first := r.slots[h%Cap].Load()
		var dt uint32
		if dst != nil {
			dt = dst.tail.Load()
		}
		for i := uint32(1); i < n; i++ {
			// dst is empty and owned by this goroutine: its slots are
			// invisible to other consumers until the tail is stored.
			dst.slots[(dt+i-1)%Cap].Store(r.slots[(h+i)%Cap].Load())
		}
		if r.head.CompareAndSwap(h, h+n) {
			if n > 1 {
				dst.tail.Store(dt + n - 1)
			}
			return first
		}
	}
}
