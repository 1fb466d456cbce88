package forkjoin

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSpawnListTrimAfterRefill: nodes that other workers returned and the
// owner took back with refill count toward the free list's length, so that
// an idle trim cuts the list to spawnListCap (spawn.go, trim). The owner
// takes 4*spawnListCap nodes, another worker empties and returns them all,
// the owner takes one (refill takes the whole returned stack) and trims.
// On 8cb688a refill reset the returned count before reading it: the free
// list counted 1 node, trim saw nothing over the cap and kept all
// 4*spawnListCap-1.
func TestSpawnListTrimAfterRefill(t *testing.T) {
	owner, other := &Worker{}, &Worker{}
	l := &spawnList[funcAction]{}
	nodes := make([]*spawnNode[funcAction], 4*spawnListCap)
	for i := range nodes {
		nodes[i] = l.take(owner)
	}
	for _, n := range nodes {
		n.release(other)
	}
	l.take(owner)
	l.trim()
	length := 0
	for n := l.free; n != nil; n = n.next {
		length++
	}
	require.LessOrEqual(t, length, spawnListCap, "free list after an idle trim")
}
