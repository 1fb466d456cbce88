package deque_test

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/magpie-go/magpie/internal/deque"
	"github.com/magpie-go/magpie/internal/park"
)

// TestNoLostWakeupWithPark runs the real deque with the real sleeper set,
// in the protocol of the runtime, round after round:
//
//   - the owner pushes lazily onto an empty public part, which publishes,
//     and then wakes a sleeper if Any reports one;
//   - a thief steals, finds nothing, registers (Prepare), steals again, and
//     then sleeps, or cancels if the second steal found the element.
//
// Publication is a store of bottom followed by the load of the sleeper
// count; registration is an atomic add followed by loads of top and
// bottom. If the store of bottom could be delayed past the load (a plain
// store on x86 waits in the store buffer), both could miss each other: the
// owner sees no sleeper, the thief's second steal sees no element, and the
// thief sleeps with nobody to wake it. The test counts such rounds (the
// thief reaches Sleep while the owner woke nobody) instead of hanging on
// them, wakes the thief itself, and requires zero.
func TestNoLostWakeupWithPark(t *testing.T) {
	rounds := stressRounds(1_000_000)
	const thiefID = 0
	var (
		d        = deque.New[int]()
		s        = park.New(1)
		x        = new(int)
		start    atomic.Int64 // round the thief may run
		got      atomic.Int64 // round in which the thief took the element
		sleeping atomic.Int64 // round in which the thief is about to Sleep
		slept    atomic.Int64 // tokens the thief consumed in Sleep
		rechecks atomic.Int64 // rounds in which the thief's re-check found the element
		stop     atomic.Bool
	)
	go func() {
		rng := rand.New(rand.NewPCG(5, 6))
		for r := int64(1); ; r++ {
			if !waitUntil(func() bool { return start.Load() >= r || stop.Load() }) || stop.Load() {
				return
			}
			jitter(rng, 64)
			for {
				if d.Steal() != nil {
					break
				}
				s.Prepare(thiefID, true)
				if d.Steal() != nil {
					s.Cancel(thiefID)
					rechecks.Add(1)
					break
				}
				sleeping.Store(r)
				s.Sleep(thiefID)
				slept.Add(1)
				s.Cancel(thiefID)
				if stop.Load() {
					return
				}
			}
			got.Store(r)
		}
	}()
	defer func() {
		stop.Store(true)
		s.Unpark(thiefID) // in case the test failed with the thief asleep
	}()

	rng := rand.New(rand.NewPCG(7, 8))
	var misses, woken int
	for r := int64(1); r <= int64(rounds); r++ {
		slept0 := slept.Load()
		start.Store(r)
		jitter(rng, 64)
		// The owner's side, as in the runtime's fork.
		if !d.PushLazy(x) {
			t.Fatalf("round %d: a lazy push onto an empty public part did not publish", r)
		}
		woke := s.Any() && s.WakeOne()
		if woke {
			woken++
		}
		if !waitUntil(func() bool {
			return got.Load() == r || sleeping.Load() == r && !woke
		}) {
			t.Fatalf("round %d: the thief neither took the element nor went to sleep within %v (woke: %v)", r, hangLimit, woke)
		}
		if got.Load() != r {
			// The thief re-checked after registering, found nothing, and is
			// going to sleep, and the owner saw no sleeper: a lost wake-up.
			misses++
			s.WakeOne()
			if !waitUntil(func() bool { return got.Load() == r }) {
				t.Fatalf("round %d: the thief did not take the element after a wake-up", r)
			}
		}
		// A token handed to a thief that then found the element on its
		// re-check is still pending: take it, so that every round starts
		// without one.
		if pending := woke && slept.Load() == slept0; pending {
			s.Sleep(thiefID)
		}
		if n := d.OwnerLen(); n != 0 {
			t.Fatalf("round %d: %d elements left", r, n)
		}
	}
	t.Logf("%d rounds: the thief's re-check after Prepare found the element in %d, the owner woke it in %d; %d lost wake-ups",
		rounds, rechecks.Load(), woken, misses)
	if misses != 0 {
		t.Errorf("%d lost wake-ups in %d rounds", misses, rounds)
	}
}
