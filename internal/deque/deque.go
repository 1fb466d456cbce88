// Package deque implements the Chase-Lev work-stealing deque that every
// forkjoin worker owns.
//
// The owner pushes and pops at the bottom (LIFO) or polls at the top (FIFO,
// for async mode); any other goroutine steals at the top (FIFO). It follows
// Chase and Lev, "Dynamic Circular Work-Stealing Deque" (SPAA 2005), with the
// memory orderings of Lê, Pop, Cohen and Zappa Nardelli (PPoPP 2013).
//
// # Invariants
//
//   - top only grows, and only by a successful CAS. bottom is written by the
//     owner alone. Indices are 64-bit and never wrap.
//   - The live elements are exactly the indices [top, bottom); index i lives
//     in ring slot i & mask. A slot is written only by Push, only at index
//     bottom, and only while bottom-top < len(ring), so a live slot is never
//     overwritten.
//   - The element at index top can leave the deque only through a CAS of top
//     from that index: thieves always CAS, and the owner's Pop CASes when it
//     takes the last element (top == bottom-1). Hence two parties can never
//     both take one element, and an element is never lost.
//   - A ring is never written again once replaced by a larger one (Push
//     copies [top, bottom) into the new ring and then publishes it). A thief
//     that still reads the old ring therefore reads the value of the index it
//     is about to CAS; if its CAS succeeds that index was live all along.
//     Old rings are reclaimed by the garbage collector once no thief holds
//     them, which removes the reclamation and ABA problems of a C version.
//
// # Memory ordering
//
// Go's sync/atomic operations are sequentially consistent, which is stronger
// than each step needs:
//
//   - Push writes the slot, then stores bottom. A thief that loads the new
//     bottom therefore also sees the slot (the store of bottom is a release).
//   - Pop stores bottom-1 and then loads top. This store-load pair is the
//     heart of the algorithm: with a thief's load of top followed by its load
//     of bottom it forms Dekker's pattern, and sequential consistency
//     guarantees that the owner and a thief cannot both miss each other's
//     write, so at most one of them takes the last element without a CAS.
//   - Slots are atomic pointers: a thief may read a slot at the same time as
//     the owner rewrites it (see below).
//
// Push needs only store-store order (slot, then bottom). On x86, outside
// the race detector, it uses plain stores, which are release stores under
// total store order (see publish_tso.go), so an un-stolen Push+Pop costs one
// locked instruction: the XCHG of Pop's store of bottom, which the
// store-load pair above requires. Elsewhere every store is a sequentially
// consistent atomic.
//
// A thief may read a slot while the owner rewrites it: after the thief
// loaded top and bottom, the owner can pop everything and push a full ring
// of new elements. The thief's CAS of top then fails and it discards what
// it read; the read is atomic and word-sized, so it is never torn.
//
// # Split deque
//
// The deque is split (as in Lace, van Dijk and van de Pol, and the private
// deques of Acar, Charguéraud and Rainey, PPoPP 2013): [top, bottom) is
// public, [bottom, end) is private to the owner. PushLazy appends to the
// private part and Pop takes from it with plain loads and stores, no atomic
// instruction at all, because no thief ever reads at or beyond bottom.
//
// PushLazy publishes (one release store of bottom = end) in two cases: when
// the public part is empty, so that the owner's oldest pending element is
// always stealable, and when a thief has asked for more by finding the
// public part empty (it sets wantSplit). In divide and conquer the oldest
// element is the largest piece of work, the one a thief should take anyway;
// the younger ones behind it stay private until a thief takes it and asks
// again, and are then published at the owner's next PushLazy. Push, Poll and
// Publish publish unconditionally. With no private elements (end ==
// bottom), Pop is the Chase-Lev pop above.
//
// The price is latency: elements behind a stolen one become stealable only
// at the owner's next PushLazy, about one leaf task later in fork-join code.
package deque

import (
	"sync/atomic"
	"unsafe"

	"github.com/klauspost/cpuid/v2"
)

// minCapacity is the initial ring size; it must be a power of two.
const minCapacity = 64

// Deque is a Chase-Lev work-stealing deque of *T. The zero value is not
// usable; call New. Push, PushLazy, Pop, Poll, Publish and OwnerLen may be
// called only by the owner (one goroutine at a time); Steal and Len by
// anyone.
type Deque[T any] struct {
	// top and bottom point into a cache-line-aligned block so that thieves
	// hammering top do not invalidate the owner's line holding bottom.
	top       *atomic.Int64
	bottom    *atomic.Int64 // the split point: [top, bottom) is public
	wantSplit *atomic.Int64 // 1: a thief found the public part empty
	ring      atomic.Pointer[ring[T]]

	_ [128]byte // the owner's private fields below, off the thieves' lines

	end      int64 // owner only: [bottom, end) are private elements
	topCache int64 // owner only: a value top had; top only grows
}

type ring[T any] struct {
	mask  int64
	slots []atomic.Pointer[T]
}

func newRing[T any](capacity int64) *ring[T] {
	return &ring[T]{mask: capacity - 1, slots: make([]atomic.Pointer[T], capacity)}
}

func (r *ring[T]) slot(i int64) *atomic.Pointer[T] { return &r.slots[i&r.mask] }

// cacheLineWords is the cache line size in 8-byte words, from cpuid, at
// least 8 (64 bytes). Doubled because adjacent-line prefetchers pull lines
// in pairs on most x86 parts.
var cacheLineWords = func() int {
	line := cpuid.CPU.CacheLine
	if line < 64 {
		line = 64
	}
	return 2 * line / 8
}()

// New returns an empty deque.
func New[T any]() *Deque[T] {
	stride := cacheLineWords
	block := make([]atomic.Int64, 3*stride)
	// Skip to the first word that starts a cache line (the GC never moves
	// heap objects, so the address is stable).
	addr := uintptr(unsafe.Pointer(&block[0]))
	skip := int((uintptr(stride*8) - addr%uintptr(stride*8)) % uintptr(stride*8) / 8)
	d := &Deque[T]{
		top:       &block[skip],
		wantSplit: &block[skip+1], // written by thieves, like top
		bottom:    &block[skip+stride],
	}
	d.wantSplit.Store(1) // the first lazy push publishes
	d.ring.Store(newRing[T](minCapacity))
	return d
}

// push appends x to the private part. It allocates only when the ring
// grows.
func (d *Deque[T]) push(x *T) {
	e := d.end
	r := d.ring.Load()
	if e-d.topCache > r.mask { // may be full: refresh the cached top
		d.topCache = d.top.Load()
		if e-d.topCache > r.mask {
			r = d.grow(r, d.topCache, e)
		}
	}
	storeSlot(r.slot(e), x)
	d.end = e + 1
}

// Push adds x at the bottom and makes every element visible to thieves.
// Owner only.
func (d *Deque[T]) Push(x *T) {
	d.push(x)
	d.publish()
}

// PushLazy adds x at the bottom but keeps it private, invisible to thieves
// and free of any atomic instruction, as long as a public element remains
// for thieves to take and no thief has asked for work since the last
// publication. Otherwise (the public part is empty, or a thief found it
// empty) it publishes every private element and reports true, and the
// caller should wake a sleeping worker if there is one. Owner only. See
// "Split deque" in the package documentation.
func (d *Deque[T]) PushLazy(x *T) bool {
	d.push(x)
	if d.wantSplit.Load() != 0 {
		d.wantSplit.Store(0)
	} else if d.bottom.Load() > d.top.Load() {
		return false // thieves still have the oldest element to take
	}
	d.publish()
	return true
}

// Publish makes every private element visible to thieves and reports
// whether there was any. Owner only.
func (d *Deque[T]) Publish() bool {
	if d.end == d.bottom.Load() {
		return false
	}
	d.publish()
	return true
}

func (d *Deque[T]) publish() {
	storeRelease(d.bottom, d.end) // publishes the slots to thieves
}

func (d *Deque[T]) grow(old *ring[T], t, e int64) *ring[T] {
	r := newRing[T](2 * (old.mask + 1))
	for i := t; i < e; i++ {
		r.slot(i).Store(old.slot(i).Load())
	}
	d.ring.Store(r)
	return r
}

// Pop removes and returns the bottom element (LIFO), or nil if the deque is
// empty. Owner only. A private element is taken with plain loads and
// stores; a public one costs one locked instruction.
func (d *Deque[T]) Pop() *T {
	if e := d.end; e > d.bottom.Load() {
		// Private: no thief reads at or beyond bottom.
		e--
		d.end = e
		return d.ring.Load().slot(e).Load()
	}
	x := d.popPublic()
	d.end = d.bottom.Load()
	return x
}

// popPublic is the Chase-Lev pop, for a deque with no private part.
func (d *Deque[T]) popPublic() *T {
	b := d.bottom.Load() - 1
	if d.top.Load() > b {
		// Empty. top only grows, so this is not a stale answer; skipping the
		// store of bottom keeps polling an empty deque free of locked
		// instructions.
		return nil
	}
	d.bottom.Store(b)
	t := d.top.Load() // must follow the store of bottom (see package doc)
	if t > b {
		// A thief took the last element between our two loads of top.
		d.bottom.Store(b + 1)
		return nil
	}
	x := d.ring.Load().slot(b).Load()
	if t == b {
		// Last element: race the thieves for it through top.
		if !d.top.CompareAndSwap(t, t+1) {
			x = nil
		}
		d.bottom.Store(b + 1)
	}
	return x
}

// Poll removes and returns the top element (FIFO), or nil if the deque is
// empty. Owner only: it is how an async-mode worker runs its own tasks
// oldest first. It publishes the private part first.
func (d *Deque[T]) Poll() *T {
	d.Publish()
	for {
		x, retry := d.steal(false)
		if !retry {
			return x
		}
	}
}

// Steal removes and returns the top element (FIFO). It returns nil when the
// public part is empty or when it lost a race for the element to another
// thief or the owner; in the latter case someone else made progress, and
// the caller may simply try again or try elsewhere. Finding the public part
// empty asks the owner to publish its private part at its next PushLazy.
// Safe for any goroutine.
func (d *Deque[T]) Steal() *T {
	x, _ := d.steal(true)
	return x
}

// steal takes the top element; thief says whether an empty public part
// should ask the owner to publish (not when the owner polls itself).
func (d *Deque[T]) steal(thief bool) (x *T, retry bool) {
	t := d.top.Load()
	b := d.bottom.Load() // must follow the load of top (see package doc)
	if t >= b {
		if thief && d.wantSplit.Load() == 0 {
			d.wantSplit.Store(1)
		}
		return nil, false
	}
	x = d.ring.Load().slot(t).Load()
	if !d.top.CompareAndSwap(t, t+1) {
		return nil, true
	}
	return x, false
}

// OwnerLen reports the number of elements, private ones included. Owner
// only.
func (d *Deque[T]) OwnerLen() int {
	return int(d.end - d.top.Load())
}

// Len reports the number of public elements, those a thief can take: a
// snapshot, safe for anyone.
func (d *Deque[T]) Len() int {
	n := d.bottom.Load() - d.top.Load()
	if n < 0 {
		return 0 // a Pop in progress on an empty deque
	}
	return int(n)
}

// Cap reports the capacity of the current ring (for tests and stats).
func (d *Deque[T]) Cap() int { return int(d.ring.Load().mask + 1) }
