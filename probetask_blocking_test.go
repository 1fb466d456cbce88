package magpie

import (
	"testing"

	"github.com/magpie-go/magpie/forkjoin"
)

// TestShortLoopInsideTaskOtherPoolNoSpare: TestShortLoopInsideTaskOtherPool
// on a caller's pool that may start no compensating worker
// (WithMaxBlocked(0)): the caller, A's only worker, waits for the loop,
// and the loop's index 1, on B, calls Invoke on A. forkjoin.Blocking then
// waits plainly, holding A's only worker, and the Invoke on A never runs;
// the caller must wait as Invoke does, running A's queued tasks meanwhile.
func TestShortLoopInsideTaskOtherPoolNoSpare(t *testing.T) {
	a := forkjoin.New(forkjoin.WithParallelism(1), forkjoin.WithMaxBlocked(0))
	b := forkjoin.New(forkjoin.WithParallelism(2))
	crossPoolLoop(t, a, b, 2, func() {})
	b.Close()
	a.Close()
}
