package forkjoin

// Hooks for the external tests: read-only views of state that no exported
// API shows, each one atomic load (safe from any goroutine).

// SleepersOf reports how many of p's workers are registered as asleep or
// about to sleep.
func SleepersOf(p *Pool) int { return p.sleepers.Count() }

// Asked reports whether a thief's request for work is pending on w's
// deque (internal/deque, "No hidden work").
func Asked(w *Worker) bool { return w.deque.Asked() }

// PublicLen reports how many tasks thieves can see in w's deque.
func PublicLen(w *Worker) int { return w.deque.Len() }

// HoldTakeLock takes the injector's take lock, as a worker descheduled in
// the middle of a take would hold it, until release is called.
func HoldTakeLock(p *Pool) (release func(), ok bool) {
	if !p.inj.taking.CompareAndSwap(false, true) {
		return nil, false
	}
	return func() { p.inj.taking.Store(false) }, true
}

// TakeLocks reports how many times p's workers have acquired the take
// lock (injector.lockTake).
func TakeLocks(p *Pool) uint64 {
	q := p.inj
	q.lockTake()
	defer q.unlockTake()
	return q.locks - 1 // this call's own
}

// SpawnBlock is the most spawned tasks one deque element holds (spawn.go).
const SpawnBlock = spawnBlock

// HandoffLen reports how many tasks wait on p's handoff list (handoff.go).
func HandoffLen(p *Pool) int { return p.handoff.len() }

// CallbacksOn reports how many callbacks (Then stages, AllOf and AnyOf
// arrivals) are registered on f's latch and not yet run.
func CallbacksOn[T any](f *Future[T]) int {
	l := &f.c.latch
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.wait == nil {
		return 0
	}
	return len(l.wait.then)
}

// RoomOf reports the tokens held in p's bounded queue (WithMaxQueued) and
// the owed units (room.go): their sum counts the accepted submissions not
// yet claimed.
func RoomOf(p *Pool) (tokens int, owed int64) { return len(p.inj.room), p.inj.owed.Load() }
