//go:build !((amd64 || 386) && !race)

package deque

import (
	"sync/atomic"
	"unsafe"
)

// storeSlot writes x into a slot that no thief can take yet. See
// publish_tso.go for the x86 version.
func storeSlot(s *unsafe.Pointer, x unsafe.Pointer) { atomic.StorePointer(s, x) }

// storeRelease publishes v; everything the owner wrote before is visible to
// a thief that loads v.
func storeRelease(p *atomic.Int64, v int64) { p.Store(v) }
