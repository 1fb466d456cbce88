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
// total store order (see publish_tso.go), so a Push and a Chase-Lev Pop cost
// one locked instruction: the XCHG of Pop's store of bottom, which the
// store-load pair above requires (and the split below avoids even that for
// private elements). Elsewhere every store is a sequentially consistent
// atomic.
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
// PushLazy publishes (one release store of bottom = end) when the public
// part is or may be empty, so that the owner's oldest pending element is
// always stealable. One flag, wantSplit, says so: it is set by a thief that
// finds the public part empty and by whoever takes its last element (a
// thief, or the owner popping or polling it), and cleared by the owner just
// before it publishes; so the private push (PushPrivate) reads one shared
// word. In divide and conquer the oldest element is the largest piece of
// work, the one a thief should take anyway; the younger ones behind it stay
// private until a thief takes it, and are then published at the owner's
// next PushLazy. Push, Poll and Publish publish unconditionally. With no
// private elements (end == bottom), Pop is the Chase-Lev pop above.
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
//
// The algorithm lives in core, on unsafe.Pointer slots, and Deque[T] only
// converts: the core is compiled once instead of once per GC shape, with no
// generic dictionary on the fork/join path, and its fast paths (a private
// push, a private pop) are small enough for the compiler to inline into the
// runtime's fork and join.
type Deque[T any] struct{ c core }

// core is the untyped deque. Slots hold unsafe.Pointer values, which the
// garbage collector traces like any pointer.
type core struct {
	// top and bottom point into a cache-line-aligned block so that thieves
	// hammering top do not invalidate the owner's line holding bottom.
	top       *atomic.Int64
	bottom    *atomic.Int64 // the split point: [top, bottom) is public
	wantSplit *atomic.Int64 // 1: the public part was found or left empty (see pushLazy)
	ring      atomic.Pointer[ring]

	_ [128]byte // the owner's private fields below, off the thieves' lines

	end      int64          // owner only: [bottom, end) are private elements
	topCache int64          // owner only: a value top had; top only grows
	slots    unsafe.Pointer // owner only: &ring.slots[0] of the current ring
	mask     int64          // owner only: ring.mask of the current ring
}

type ring struct {
	mask  int64
	slots []unsafe.Pointer // read and written with sync/atomic (see publish_*.go)
}

func newRing(capacity int64) *ring {
	return &ring{mask: capacity - 1, slots: make([]unsafe.Pointer, capacity)}
}

func (r *ring) slot(i int64) *unsafe.Pointer { return &r.slots[i&r.mask] }

func (r *ring) load(i int64) unsafe.Pointer { return atomic.LoadPointer(r.slot(i)) }

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
	d := new(Deque[T])
	d.c.init()
	return d
}

func (c *core) init() {
	stride := cacheLineWords
	block := make([]atomic.Int64, 3*stride)
	// Skip to the first word that starts a cache line (the GC never moves
	// heap objects, so the address is stable).
	addr := uintptr(unsafe.Pointer(&block[0]))
	skip := int((uintptr(stride*8) - addr%uintptr(stride*8)) % uintptr(stride*8) / 8)
	c.top = &block[skip]
	c.wantSplit = &block[skip+1] // written by thieves, like top
	c.bottom = &block[skip+stride]
	c.wantSplit.Store(1) // empty: the first lazy push publishes
	c.setRing(newRing(minCapacity))
}

// setRing installs r, for thieves and in the owner's cached copies.
func (c *core) setRing(r *ring) {
	c.slots = unsafe.Pointer(&r.slots[0])
	c.mask = r.mask
	c.ring.Store(r)
}

// at returns the owner's view of the slot of index i in the current ring,
// without the loads of ring and the bounds check of r.slot.
func (c *core) at(i int64) *unsafe.Pointer {
	return (*unsafe.Pointer)(unsafe.Add(c.slots, (i&c.mask)*int64(unsafe.Sizeof(c.slots))))
}

// Push adds x at the bottom and makes every element visible to thieves.
// Owner only.
func (d *Deque[T]) Push(x *T) {
	d.c.push(unsafe.Pointer(x))
	d.c.publish()
}

// PushLazy adds x at the bottom but keeps it private, invisible to thieves
// and free of any atomic instruction, as long as a public element remains
// for thieves to take and no thief has asked for work since the last
// publication. Otherwise (the public part is empty, or a thief found it
// empty) it publishes every private element and reports true, and the
// caller should wake a sleeping worker if there is one. Owner only. See
// "Split deque" in the package documentation.
func (d *Deque[T]) PushLazy(x *T) bool { return d.c.pushLazy(unsafe.Pointer(x)) }

// PushPrivate is the fast path of PushLazy: if x can be added without a
// publication or a larger ring it adds it and reports true, and otherwise
// it does nothing and reports false, and the caller should call PushLazy.
// It calls nothing and inlines. Owner only.
func (d *Deque[T]) PushPrivate(x *T) bool { return d.c.pushPrivate(unsafe.Pointer(x)) }

// Publish makes every private element visible to thieves and reports
// whether there was any. Owner only.
func (d *Deque[T]) Publish() bool { return d.c.publishIfPrivate() }

// Pop removes and returns the bottom element (LIFO), or nil if the deque is
// empty. Owner only. A private element is taken with plain loads and
// stores; a public one costs one locked instruction.
func (d *Deque[T]) Pop() *T { return (*T)(d.c.pop()) }

// PopPrivate is the fast path of Pop: it removes and returns the bottom
// element if it is private, and otherwise returns nil, and the caller
// should call Pop. It calls nothing and inlines. Owner only.
func (d *Deque[T]) PopPrivate() *T { return (*T)(d.c.popPrivate()) }

// Poll removes and returns the top element (FIFO), or nil if the deque is
// empty. Owner only: it is how an async-mode worker runs its own tasks
// oldest first. It publishes the private part first.
func (d *Deque[T]) Poll() *T { return (*T)(d.c.poll()) }

// Steal removes and returns the top element (FIFO). It returns nil when the
// public part is empty or when it lost a race for the element to another
// thief or the owner; in the latter case someone else made progress, and
// the caller may simply try again or try elsewhere. Finding the public part
// empty asks the owner to publish its private part at its next PushLazy.
// Safe for any goroutine.
func (d *Deque[T]) Steal() *T {
	x, _ := d.c.steal(true)
	return (*T)(x)
}

// OwnerLen reports the number of elements, private ones included. Owner
// only.
func (d *Deque[T]) OwnerLen() int { return int(d.c.end - d.c.top.Load()) }

// Len reports the number of public elements, those a thief can take: a
// snapshot, safe for anyone.
func (d *Deque[T]) Len() int {
	n := d.c.bottom.Load() - d.c.top.Load()
	if n < 0 {
		return 0 // a Pop in progress on an empty deque
	}
	return int(n)
}

// Cap reports the capacity of the current ring (for tests and stats).
func (d *Deque[T]) Cap() int { return int(d.c.ring.Load().mask + 1) }

// push appends x to the private part. It allocates only when the ring
// grows.
func (c *core) push(x unsafe.Pointer) {
	e := c.end
	if e-c.topCache > c.mask { // may be full: refresh the cached top
		c.makeRoom(e)
	}
	storeSlot(c.at(e), x)
	c.end = e + 1
}

// pushPrivate is the fast path of pushLazy: it appends x to the private
// part and reports true if that needs neither a publication nor a larger
// ring, and otherwise does nothing and reports false. It calls nothing, so
// that it inlines into the runtime's fork.
//
// wantSplit is 1 whenever the public part may be empty: it starts at 1, a
// thief that finds the public part empty or takes its last element sets it,
// and so does the owner when a pop or poll takes the last public element.
// So wantSplit == 0 means that a thief still has something to take, and
// the new element can stay private. The flag may be set spuriously (bottom
// grew meanwhile), which costs one needless publication, never a hidden
// element: publishLazy clears the flag before it publishes, so a request
// made at any time is served by this or the next publication.
func (c *core) pushPrivate(x unsafe.Pointer) bool {
	e := c.end
	if e-c.topCache > c.mask || c.wantSplit.Load() != 0 {
		return false
	}
	storeSlot(c.at(e), x)
	c.end = e + 1
	return true
}

// pushLazy is push that publishes only when needed (see PushLazy).
func (c *core) pushLazy(x unsafe.Pointer) bool {
	if c.pushPrivate(x) {
		return false
	}
	c.push(x)
	if c.wantSplit.Load() == 0 {
		return false // the ring grew, and thieves still have work
	}
	return c.publishLazy()
}

func (c *core) publishLazy() bool {
	c.wantSplit.Store(0)
	c.publish()
	return true
}

func (c *core) publishIfPrivate() bool {
	if c.end == c.bottom.Load() {
		return false
	}
	c.publish()
	return true
}

func (c *core) publish() {
	storeRelease(c.bottom, c.end) // publishes the slots to thieves
}

// makeRoom refreshes the cached top and grows the ring if it is full.
func (c *core) makeRoom(e int64) {
	c.topCache = c.top.Load()
	t := c.topCache
	old := c.ring.Load()
	if e-t <= old.mask {
		return
	}
	r := newRing(2 * (old.mask + 1))
	for i := t; i < e; i++ {
		atomic.StorePointer(r.slot(i), old.load(i))
	}
	c.setRing(r)
}

// pop takes a private element with plain loads and stores (no thief reads
// at or beyond bottom), else falls back to the Chase-Lev pop.
func (c *core) pop() unsafe.Pointer {
	if x := c.popPrivate(); x != nil {
		return x
	}
	return c.popPublic()
}

// popPrivate takes the newest private element, or returns nil if there is
// none. It calls nothing, so that it inlines into the runtime's join.
func (c *core) popPrivate() unsafe.Pointer {
	if e := c.end - 1; e >= c.bottom.Load() {
		c.end = e
		return *c.at(e) // only the owner writes slots, so a plain load is no race
	}
	return nil
}

// popPublic is the Chase-Lev pop, for a deque with no private part.
func (c *core) popPublic() unsafe.Pointer {
	b := c.bottom.Load() - 1
	if c.top.Load() > b {
		// Empty. top only grows, so this is not a stale answer; skipping the
		// store of bottom keeps polling an empty deque free of locked
		// instructions.
		return nil
	}
	c.bottom.Store(b)
	t := c.top.Load() // must follow the store of bottom (see package doc)
	var x unsafe.Pointer
	switch {
	case t > b:
		// A thief took the last element between our two loads of top.
		c.bottom.Store(b + 1)
	case t == b:
		// Last element: race the thieves for it through top. Either way the
		// public part is now empty: ask for the next push to publish.
		x = *c.at(b)
		if !c.top.CompareAndSwap(t, t+1) {
			x = nil
		}
		c.bottom.Store(b + 1)
		c.wantSplit.Store(1)
	default:
		x = *c.at(b)
	}
	c.end = c.bottom.Load()
	return x
}

func (c *core) poll() unsafe.Pointer {
	c.publishIfPrivate()
	for {
		x, retry := c.steal(false)
		if !retry {
			return x
		}
	}
}

// steal takes the top element; thief says whether an empty public part
// should ask the owner to publish (not when the owner polls itself, which
// publishes first). Whoever takes the last public element asks as well, so
// that wantSplit is set whenever the public part is empty (see pushLazy).
func (c *core) steal(thief bool) (x unsafe.Pointer, retry bool) {
	t := c.top.Load()
	b := c.bottom.Load() // must follow the load of top (see package doc)
	if t >= b {
		if thief && c.wantSplit.Load() == 0 {
			c.wantSplit.Store(1)
		}
		return nil, false
	}
	x = c.ring.Load().load(t)
	if !c.top.CompareAndSwap(t, t+1) {
		return nil, true
	}
	if t+1 == b && c.wantSplit.Load() == 0 {
		c.wantSplit.Store(1)
	}
	return x, false
}
