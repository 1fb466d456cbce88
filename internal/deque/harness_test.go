package deque_test

import (
	"flag"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/magpie-go/magpie/internal/testenv"
)

var long = flag.Bool("deque.long", false,
	"run the round-based stress tests (TestStealLastRequestsSplit, TestNoLostWakeupWithPark) 10x longer")

// stressRounds scales a round count: divided by 5 under the race detector,
// multiplied by 10 with -deque.long, divided by 10 with -short.
func stressRounds(n int) int {
	if testenv.Race {
		n /= 5
	}
	if *long {
		n *= 10
	}
	if testing.Short() {
		n /= 10
	}
	return n
}

// hangLimit bounds every wait of the round-based stress tests: a wait that
// takes longer is a hang (a lost element or a lost wake-up), and fails the
// test instead of blocking it until go test's own timeout.
const hangLimit = 20 * time.Second

// waitUntil spins (yielding now and then) until cond holds and reports
// true, or reports false after hangLimit.
//
// The round-based tests need the two goroutines on two processors at once.
// Yielding lets a goroutine that shares a processor with the one it waits
// for make progress; but runtime.Gosched never wakes an idle processor,
// so two goroutines that came to share one (after a wake-up from Sleep)
// would stay together, taking turns, with the other processor idle. A
// goroutine start does wake one (newproc calls wakep), so a long wait
// starts an empty goroutine to pull them apart again.
func waitUntil(cond func() bool) bool {
	var deadline time.Time
	for i := 0; !cond(); i++ {
		if i&63 == 63 {
			if deadline.IsZero() {
				deadline = time.Now().Add(hangLimit)
			} else if time.Now().After(deadline) {
				return false
			}
			if i&4095 == 4095 {
				go func() {}()
			}
			runtime.Gosched()
		}
	}
	return true
}

var spinSink atomic.Int64

// jitter busy-waits for a random 0..max-1 short iterations, so that two
// goroutines released together meet at varying points of their operations.
func jitter(rng *rand.Rand, max int) {
	for range rng.IntN(max) {
		spinSink.Load()
	}
}
