// Package deque implements the Chase-Lev work-stealing deque that every
// forkjoin worker owns.
//
// The owner pushes and pops at the bottom (LIFO) or polls at the top (FIFO,
// for async mode); any other goroutine steals at the top (FIFO). It follows
// Chase and Lev, "Dynamic Circular Work-Stealing Deque" (SPAA 2005), with the
// memory orderings of Lê, Pop, Cohen and Zappa Nardelli (PPoPP 2013), split
// into a public part that thieves see and a private part that they do not
// (see "Split deque").
//
// # Layout
//
// The deque's elements, oldest first, are the public elements, indices
// [top, bottom) of a circular ring, followed by the private elements,
// priv[:n] of a slice that only the owner ever reads or writes. top only
// grows, and only by a successful CAS; bottom is written by the owner alone
// (owner's copy: bot). Indices are 64-bit and never wrap.
//
// # Invariants
//
//   - Index i lives in ring slot i & mask. The owner writes the slots of
//     the current ring only when it publishes, at indices [bottom,
//     bottom+n), and only after checking that bottom+n-top' <= len(ring)
//     for a value top' that top had (top only grows), so a live slot is
//     never overwritten. (It also fills a new ring before installing it.)
//   - The element at index top can leave the deque only through a CAS of top
//     from that index: thieves always CAS, and the owner's Pop CASes when it
//     takes the last public element (top == bottom-1). Hence two parties can
//     never both take one element, and an element is never lost.
//   - A ring is never written again once replaced by a larger one (the
//     owner copies [top, bottom) into the new ring before installing it). A
//     thief that still reads the old ring therefore reads the value of the
//     index it is about to CAS; if its CAS succeeds that index was live all
//     along. Old rings are reclaimed by the garbage collector once no thief
//     holds them, which removes the reclamation and ABA problems of a C
//     version.
//   - No thief ever reads priv: thieves read only top, bottom, wantSplit,
//     ring and ring slots. So the owner uses priv with plain loads and
//     stores, and a private push or pop costs no atomic write.
//   - At rest (no operation in flight), wantSplit == 0 implies that the
//     public part is non-empty. Hence, at rest, private elements imply a
//     non-empty public part or wantSplit == 1 (see "Split deque" for why).
//   - No hidden work: a thief's request (wantSplit = 1) is served at the
//     owner's next push or pop. Every owner operation that can leave
//     private elements (PushLazy, Pop, PopIf) publishes them if it finds
//     wantSplit set, and the fast paths (PushPrivate, PopPrivate) do
//     nothing then; Push, Poll and Publish leave none. So when the owner
//     returns from an operation that no thief operation overlapped, it
//     holds private elements only if the public part is non-empty.
//
// # Memory ordering
//
// Every memory location that one goroutine may read while another writes it
// goes through sync/atomic: top, bottom, wantSplit, the ring pointer and
// every ring slot. The code is the same with and without the race detector.
// Go's atomics are sequentially consistent (all of them fall in one total
// order consistent with each goroutine's program order), which the
// algorithm relies on in three places:
//
//   - Publication stores the slots, then bottom. A thief that loads the new
//     bottom therefore also sees the slots (and the ring they are in, which
//     is stored before them when the ring grows), and the element's
//     contents, written before the push (TestStolenContentsArePublished).
//   - Pop stores bottom-1 and then loads top, and a thief loads top and then
//     bottom. This is Dekker's pattern: sequential consistency guarantees
//     that the owner and a thief cannot both miss each other's write, so at
//     most one of them takes the last element without a CAS.
//   - The store of bottom that publishes is followed, in the caller, by a
//     load of the sleeper count (park.Sleepers.Any); a thief that finds
//     nothing registers itself (an atomic add) and then steals again. Both
//     sides are sequentially consistent, so either the thief's second steal
//     sees the published elements or the owner sees the sleeper. (A plain
//     store of bottom would not do: on x86 a store may wait in the store
//     buffer while a later load goes ahead, and both sides would miss.)
//
// On amd64 an atomic store is an XCHG (a locked instruction, about as costly
// as a CAS) and an atomic load a plain MOV. So a private push or pop costs no
// locked instruction (one atomic load of wantSplit), a publication of k
// elements costs k+1 (k slots and bottom, plus the clearing of wantSplit
// when a thief asked), and a public pop costs one (the store of bottom that
// the store-load pair above requires), three or four when it takes the last
// element (the CAS, the second store of bottom, the store of wantSplit).
//
// A thief may read a slot while the owner rewrites it: after the thief
// loaded top and bottom, the owner can pop everything, and publish a full
// ring of new elements. The thief's CAS of top then fails and it discards
// what it read; both accesses are atomic, so this is not a data race.
//
// # Split deque
//
// The deque is split (as in Lace, van Dijk and van de Pol, and the private
// deques of Acar, Charguéraud and Rainey, PPoPP 2013): thieves see only the
// public part; PushLazy appends to the private part and Pop takes from it
// without any atomic write.
//
// One flag, wantSplit, says that thieves need work: it is set (to 1) by a
// thief that finds the public part empty, and by whoever takes the last
// public element: a thief, or the owner popping or polling it. It is
// cleared only by the owner, just before a publication of at least one
// element. Only the owner's push and pop operations consult it:
//
//   - PushPrivate and PopPrivate do their work only while wantSplit == 0.
//   - PushLazy publishes every private element, x included, when wantSplit
//     is set; Pop and PopIf publish the remaining private elements when it is
//     set and some remain. They report the publication, and the caller then
//     wakes a sleeping worker.
//
// So a thief that asked is served at the owner's next push or pop. In divide
// and conquer the oldest element is the largest piece of work, the one a
// thief should take anyway; the younger ones behind it stay private until a
// thief takes it. Push, Poll and Publish publish unconditionally (and leave
// wantSplit alone: a request they make stale costs one needless publication
// later, never a hidden element).
//
// Why wantSplit == 0 implies a non-empty public part (at rest): it starts at
// 1, and the owner clears it only just before publishing at least one
// element. Every take of a public element is followed, later in the
// sequentially consistent order, by a check of whether the public part is
// still non-empty, and a taker that finds it empty sets the flag:
//
//   - The owner's Pop stores bottom and then loads top. It takes without a
//     CAS only if that load shows an element left below (top < bottom); it
//     takes the last element through the CAS and then sets the flag
//     itself; and if a thief took the last element first, that thief
//     checks.
//   - A thief CASes top from t to t+1 and then loads bottom again, and sets
//     the flag if that load returns at most t+1. It must not rely on the
//     bottom it loaded before the CAS: meanwhile the owner may have popped
//     the elements above t without a CAS (it saw top == t), so that the
//     thief's take leaves the public part empty although the old bottom
//     said otherwise.
//   - A taker that finds elements left leaves the emptying to a later take,
//     which checks in turn; if none comes, the public part stays non-empty.
//
// The taker's check and its store are two steps (a load, then a store
// only if the flag is 0, to spare the thieves' cache line). If the owner
// clears the flag in between, the publication that follows the clearing
// refills the public part, so the taker's later store is at worst
// spurious; a thief whose load saw 1 just before the clearing is served by
// that same publication.
//
// The flag may be set spuriously (a publication came between the check and
// the store); that costs one needless publication, never a hidden element.
//
// The price of privacy is latency: elements behind a stolen one become
// stealable only at the owner's next push or pop, about one leaf task later
// in fork-join code.
package deque

import (
	"sync/atomic"
	"unsafe"

	"github.com/klauspost/cpuid/v2"
)

// minCapacity is the initial ring and private buffer size; it must be a
// power of two.
const minCapacity = 64

// Deque is a Chase-Lev work-stealing deque of *T. The zero value is not
// usable; call New. Push, PushLazy, PushPrivate, Pop, PopPrivate, PopIf,
// Poll, Publish and OwnerLen may be called only by the owner (one goroutine
// at a time); Steal, Len and Cap by anyone.
//
// The algorithm lives in core, on unsafe.Pointer elements, and Deque[T]
// only converts: the core is compiled once instead of once per GC shape,
// with no generic dictionary on the fork/join path, and its fast paths (a
// private push, a private pop) are small enough for the compiler to inline
// into the runtime's fork and join.
type Deque[T any] struct{ c core }

// core is the untyped deque. Elements are unsafe.Pointer values, which the
// garbage collector traces like any pointer.
type core struct {
	// top, bottom and wantSplit point into a cache-line-aligned block,
	// each on its own line: thieves hammering top invalidate neither the
	// owner's line holding bottom nor the flag that the owner reads at
	// every push and pop (which thieves write only when they ask).
	top       *atomic.Int64
	bottom    *atomic.Int64 // [top, bottom) are the public elements
	wantSplit *atomic.Int64 // 1: thieves need work (see "Split deque")
	ring      atomic.Pointer[ring]

	_ [128]byte // the owner's private fields below, off the thieves' lines

	// Owner only: no other goroutine reads or writes these fields or the
	// backing array of priv, so the owner uses plain loads and stores.
	priv     []unsafe.Pointer // priv[:n] are the private elements, oldest first
	n        int              // number of private elements
	bot      int64            // the value of bottom (only the owner writes it)
	topCache int64            // a value top had; top only grows
}

type ring struct {
	mask  int64            // fixed by newRing; read-only after
	slots []unsafe.Pointer // accessed with sync/atomic once the ring is installed
}

func newRing(capacity int64) *ring {
	return &ring{mask: capacity - 1, slots: make([]unsafe.Pointer, capacity)}
}

func (r *ring) slot(i int64) *unsafe.Pointer { return &r.slots[i&r.mask] }

func (r *ring) load(i int64) unsafe.Pointer { return atomic.LoadPointer(r.slot(i)) }

func (r *ring) store(i int64, x unsafe.Pointer) { atomic.StorePointer(r.slot(i), x) }

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
	block := make([]atomic.Int64, 4*stride)
	// Skip to the first word that starts a cache line (the GC never moves
	// heap objects, so the address is stable).
	addr := uintptr(unsafe.Pointer(&block[0]))
	skip := int((uintptr(stride*8) - addr%uintptr(stride*8)) % uintptr(stride*8) / 8)
	c.top = &block[skip]
	c.bottom = &block[skip+stride]
	c.wantSplit = &block[skip+2*stride]
	c.wantSplit.Store(1) // empty: the first lazy push publishes
	c.priv = make([]unsafe.Pointer, minCapacity)
	c.ring.Store(newRing(minCapacity))
}

// Push adds x at the bottom and makes every element visible to thieves.
// Owner only.
func (d *Deque[T]) Push(x *T) {
	d.c.appendPrivate(unsafe.Pointer(x))
	d.c.publish()
}

// PushLazy adds x at the bottom. It keeps x private, invisible to thieves
// and free of any atomic write, unless a thief has asked for work (see
// "Split deque" in the package documentation); then it publishes every
// private element, x included, and reports true, and the caller should wake
// a sleeping worker if there is one. Owner only.
func (d *Deque[T]) PushLazy(x *T) (published bool) { return d.c.pushLazy(unsafe.Pointer(x)) }

// PushPrivate is the fast path of PushLazy: if no thief has asked for work
// and the private buffer has room, it adds x privately and reports true;
// otherwise it does nothing and reports false, and the caller should call
// PushLazy. It calls nothing and inlines. Owner only.
func (d *Deque[T]) PushPrivate(x *T) bool { return d.c.pushPrivate(unsafe.Pointer(x)) }

// Publish makes every private element visible to thieves and reports
// whether there was any. Owner only.
func (d *Deque[T]) Publish() bool { return d.c.publishIfPrivate() }

// Pop removes and returns the bottom element (LIFO), or nil if the deque is
// empty. Owner only. A private element is taken with plain loads and
// stores; a public one costs one locked instruction (three or four for the
// last).
// If it takes a private element while a thief has asked for work and
// private elements remain, it publishes them and reports published, and the
// caller should wake a sleeping worker if there is one.
func (d *Deque[T]) Pop() (x *T, published bool) {
	p, published := d.c.pop()
	return (*T)(p), published
}

// PopPrivate is the fast path of Pop: if no thief has asked for work and
// the bottom element is private, it removes and returns it; otherwise it
// returns nil, and the caller should call Pop. It calls nothing and
// inlines. Owner only.
func (d *Deque[T]) PopPrivate() *T { return (*T)(d.c.popPrivate()) }

// PopIf removes x and reports removed if x is the bottom element, private
// or public (a public one is taken by the Chase-Lev protocol, and may turn
// out to have been stolen: then it reports false). Otherwise it removes
// nothing and reports false. Like Pop it never returns with work hidden:
// if a thief has asked for work and private elements remain, whether or
// not it removed x, it publishes them and reports published, and the
// caller should wake a sleeping worker if there is one. Owner only.
//
// forkjoin has not called it since b99e163 (a Join unwinding from a
// Goexit now settles its fork as the panic path does, through unpushAfter
// and Pop); it is kept, with its tests (TestPopIf, and an operation of
// the model fuzz target FuzzSplitOwnerOps and of TestSplitConcurrentExactlyOnce), as the one
// primitive that removes a known element without looking below it, which
// an unpush of a single fork needs.
func (d *Deque[T]) PopIf(x *T) (removed, published bool) { return d.c.popIf(unsafe.Pointer(x)) }

// Poll removes and returns the top element (FIFO), or nil if the deque is
// empty. Owner only: it is how an async-mode worker runs its own tasks
// oldest first. It publishes the private part first, without reporting it:
// a caller that must wake a sleeping worker for the elements it leaves
// calls Publish first, which reports the publication.
func (d *Deque[T]) Poll() *T { return (*T)(d.c.poll()) }

// Steal removes and returns the top element (FIFO). It returns nil when the
// public part is empty or when it lost a race for the element to another
// thief or the owner; in the latter case someone else made progress, and
// the caller may simply try again or try elsewhere. Finding the public part
// empty, or taking its last element, asks the owner to publish its private
// part at its next push or pop. Safe for any goroutine.
func (d *Deque[T]) Steal() *T {
	x, _ := d.c.steal(true)
	return (*T)(x)
}

// PeekPrivate returns the newest element, without removing it, if it is
// private and no thief has asked for work; otherwise nil. The owner may
// change the element's contents in place: no other goroutine can read a
// private element, and while no thief has asked, keeping the deque's
// newest element private hides nothing a thief wants (see "Split deque").
// Like PushPrivate it costs one atomic load and inlines. Owner only.
func (d *Deque[T]) PeekPrivate() *T { return (*T)(d.c.peekPrivate()) }

// Asked reports whether a thief has asked for work that the owner has not
// served yet (wantSplit is set). A snapshot, safe for anyone; only the
// owner clears the flag, so an owner that sees it set knows that its next
// PushLazy publishes.
func (d *Deque[T]) Asked() bool { return d.c.wantSplit.Load() != 0 }

// OwnerLen reports the number of elements, private ones included. Owner
// only.
func (d *Deque[T]) OwnerLen() int { return int(d.c.bot-d.c.top.Load()) + d.c.n }

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

// pushPrivate is the fast path of pushLazy: it appends x to the private
// part and reports true if no thief asked for work and priv has room, and
// otherwise does nothing and reports false. It calls nothing, so that it
// inlines into the runtime's fork.
//
// wantSplit == 0 means that the public part is non-empty, or that a taker
// of its last element is about to set the flag (see "Split deque"), so the
// new element can stay private.
func (c *core) pushPrivate(x unsafe.Pointer) bool {
	p, n := c.priv, c.n
	if uint(n) >= uint(len(p)) || c.wantSplit.Load() != 0 {
		return false
	}
	p[n] = x // plain: priv is owner-only
	c.n = n + 1
	return true
}

// peekPrivate is PeekPrivate.
func (c *core) peekPrivate() unsafe.Pointer {
	p, n := c.priv, c.n-1
	if uint(n) >= uint(len(p)) || c.wantSplit.Load() != 0 {
		return nil // n < 0: no private element
	}
	return p[n] // plain: priv is owner-only
}

// popPrivate is the fast path of pop: it takes the newest private element
// if there is one and no thief asked for work, and otherwise returns nil.
// It calls nothing, so that it inlines into the runtime's join.
func (c *core) popPrivate() unsafe.Pointer {
	p, n := c.priv, c.n-1
	if uint(n) >= uint(len(p)) || c.wantSplit.Load() != 0 {
		return nil // n < 0: no private element
	}
	c.n = n
	return p[n] // plain: priv is owner-only
}

// appendPrivate appends x to the private part, growing priv if it is full.
// It allocates only when priv grows.
func (c *core) appendPrivate(x unsafe.Pointer) {
	if c.n == len(c.priv) {
		p := make([]unsafe.Pointer, 2*len(c.priv))
		copy(p, c.priv) // plain: priv is owner-only
		c.priv = p
	}
	c.priv[c.n] = x // plain: priv is owner-only
	c.n++
}

// pushLazy is push that publishes only when a thief asked (see PushLazy).
func (c *core) pushLazy(x unsafe.Pointer) bool {
	if c.pushPrivate(x) {
		return false
	}
	c.appendPrivate(x)
	if c.wantSplit.Load() == 0 {
		return false // priv grew; thieves still have work
	}
	c.publishLazy()
	return true
}

// publishLazy serves a thief's request: it clears wantSplit and then
// publishes the private elements, of which there must be at least one (so
// that the public part is non-empty once wantSplit is 0).
func (c *core) publishLazy() {
	c.wantSplit.Store(0)
	c.publish()
}

func (c *core) publishIfPrivate() bool {
	if c.n == 0 {
		return false
	}
	c.publish()
	return true
}

// publish copies the private elements into the ring at [bot, bot+n), with
// atomic stores (a stale thief may read those slots), and then stores
// bottom, which makes them visible to thieves.
func (c *core) publish() {
	b, n := c.bot, int64(c.n)
	r := c.ring.Load()
	if b+n-c.topCache > r.mask+1 { // may not fit: refresh the cached top
		r = c.makeRoom(b + n)
	}
	for i, x := range c.priv[:n] { // plain loads: priv is owner-only
		r.store(b+int64(i), x)
	}
	c.n = 0
	c.bot = b + n
	c.bottom.Store(b + n)
}

// makeRoom refreshes the cached top and grows the ring until indices
// [top, e) fit. It returns the current ring.
func (c *core) makeRoom(e int64) *ring {
	c.topCache = c.top.Load()
	t := c.topCache
	old := c.ring.Load()
	size := old.mask + 1
	if e-t <= size {
		return old
	}
	for e-t > size {
		size *= 2
	}
	r := newRing(size)
	for i := t; i < c.bot; i++ {
		// Plain store: r is not yet reachable by any other goroutine; the
		// atomic store of c.ring below publishes these writes.
		*r.slot(i) = old.load(i)
	}
	c.ring.Store(r)
	return r
}

// pop takes the newest private element, else does the Chase-Lev pop of the
// public part. See Pop.
func (c *core) pop() (x unsafe.Pointer, published bool) {
	p, n := c.priv, c.n-1
	if uint(n) >= uint(len(p)) { // n < 0: no private element
		return c.popPublic(), false
	}
	c.n = n
	x = p[n] // plain: priv is owner-only
	if n > 0 && c.wantSplit.Load() != 0 {
		c.publishLazy() // as serve, spelled out: this is the join's slow path
		published = true
	}
	return x, published
}

// serve publishes the private elements if a thief asked for work and there
// are any, and reports whether it did.
func (c *core) serve() bool {
	if c.n == 0 || c.wantSplit.Load() == 0 {
		return false
	}
	c.publishLazy()
	return true
}

// popIf is PopIf.
func (c *core) popIf(x unsafe.Pointer) (removed, published bool) {
	if n := c.n - 1; n >= 0 {
		if c.priv[n] == x { // plain: priv is owner-only
			c.n = n
			removed = true
		}
		return removed, c.serve()
	}
	b := c.bot - 1
	if c.top.Load() > b || c.ring.Load().load(b) != x {
		// Empty, or x is not the newest element. Slots are written only by
		// the owner, so slot b holds the element of index b as long as it is
		// live, and popPublic below takes exactly that element or nothing.
		return false, false
	}
	return c.popPublic() != nil, false
}

// popPublic is the Chase-Lev pop, for a deque with no private element.
func (c *core) popPublic() unsafe.Pointer {
	b := c.bot - 1
	if c.top.Load() > b {
		// Empty. top only grows, so this is not a stale answer; skipping the
		// store of bottom keeps polling an empty deque free of locked
		// instructions.
		return nil
	}
	c.bottom.Store(b)
	t := c.top.Load() // must follow the store of bottom (see package doc)
	switch {
	case t > b:
		// A thief took the last element between our two loads of top (and
		// set wantSplit: see steal).
		c.bottom.Store(b + 1)
		return nil
	case t == b:
		// Last element: race the thieves for it through top. Either way the
		// public part is now empty: ask for the next push to publish.
		x := c.ring.Load().load(b)
		if !c.top.CompareAndSwap(t, t+1) {
			x = nil
		}
		c.bottom.Store(b + 1)
		c.requestSplit()
		return x
	default:
		// t < b: elements [t, b) remain, and a thief that takes the last of
		// them sets wantSplit.
		c.bot = b
		return c.ring.Load().load(b)
	}
}

// requestSplit sets wantSplit unless it is already set (a load is cheaper
// than a store on the thieves' cache line).
func (c *core) requestSplit() {
	if c.wantSplit.Load() == 0 {
		c.wantSplit.Store(1)
	}
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
// that wantSplit is set whenever the public part is empty (see "Split
// deque").
func (c *core) steal(thief bool) (x unsafe.Pointer, retry bool) {
	t := c.top.Load()
	b := c.bottom.Load() // must follow the load of top (see package doc)
	if t >= b {
		if thief {
			c.requestSplit()
		}
		return nil, false
	}
	x = c.ring.Load().load(t)
	if !c.top.CompareAndSwap(t, t+1) {
		return nil, true
	}
	// Re-load bottom: the b above predates the CAS, and the owner may have
	// popped the elements above t since (see "Split deque").
	if t+1 >= c.bottom.Load() {
		c.requestSplit()
	}
	return x, false
}
