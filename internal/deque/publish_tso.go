//go:build (amd64 || 386) && !race

package deque

import (
	"sync/atomic"
	"unsafe"
)

// On x86 (total store order) the hardware never reorders a store with an
// earlier store, and a load never passes an earlier load, so a plain MOV is
// a release store and a plain load an acquire load. Go's atomic.Store is an
// XCHG, a full barrier costing ~15-20 ns on current parts, and Push needs
// none: it only has to publish the slot before the new bottom, which is the
// store-store order TSO gives for free. This is what Go's own scheduler does
// in runqput (a plain slot store, then atomic.StoreRel of the tail, which is
// a plain MOV on amd64). The compiler keeps the two stores in program order:
// stores to memory are never reordered with each other by Go's SSA backend.
//
// Under the race detector, and on weakly ordered architectures, the atomic
// versions in publish_atomic.go are used instead.

// storeSlot writes x into a slot that no thief can take yet.
func storeSlot(s *unsafe.Pointer, x unsafe.Pointer) { *s = x }

// storeRelease publishes v; everything the owner wrote before is visible to
// a thief that loads v.
func storeRelease(p *atomic.Int64, v int64) {
	*(*int64)(unsafe.Pointer(p)) = v
}
