package magpie

import (
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/magpie-go/magpie/forkjoin"
)

// The probe watcher: the one goroutine of the process that hands the rest
// of a loop to the pool while the loop's caller is inside one of its
// indices. Only something other than the caller can do that: the caller
// is in user code, which no wake-up reaches, so the watcher looks at the
// loops registered with it on a timer (forkjoin's slow-task watchdog,
// slow.go, does the same for tasks). A loop called from outside the pool
// is registered by probeRun (probe.go) for as long as its caller runs
// indices itself; one called from inside a task by taskProbeRun
// (probetask.go), in a slot of its own kind, whose record stays there
// after the loop until the watcher's next tick clears it (so that a
// worker's next loop on the same recycled spec registers with one load).
//
// Invariant: the watcher hands over (or shares) only a loop it saw
// registered at two consecutive ticks, so one that has run at least one
// tick (watcherTick); a loop that ends sooner is never touched, whatever
// its length. The watcher runs only while slots are taken: it starts at
// the first registration and exits after watcherIdleTicks ticks that found
// every slot free, so an idle process pays nothing and goleak sees no
// goroutine once the helpers have returned (plus at most watcherIdleTicks
// ticks and the tick that clears the task slots).
// Registration and exit are ordered by a Dekker handshake on two
// sequentially consistent atomics (the slot and watcherRunning): a loop
// registered while the watcher decides to exit is seen by the exiting
// watcher, or sees it gone and starts a new one.

const (
	// watcherSlots is how many loops can be registered at once, process
	// wide. A loop that finds no free slot runs unwatched: sequentially on
	// its caller if it is short, with the clock probe if it is long.
	watcherSlots = 64

	// watcherTick is the period of the watcher while loops are
	// registered: a loop is handed over between one and two ticks after
	// it starts, about the cost of the hand-over (probeBudget).
	watcherTick = probeBudget

	// watcherIdleTicks is the number of consecutive ticks without a
	// registered loop after which the watcher exits (10 ms).
	watcherIdleTicks = int(10 * time.Millisecond / watcherTick)
)

// taskSlots is how many loops called from inside tasks can be registered
// at once (probetask.go), process wide; one that finds none runs
// unwatched, on its caller.
const taskSlots = 64

var (
	// watchedLoops are the registered loops; a nil slot is free. A loop
	// takes a slot by CAS from nil and frees it with a store of nil.
	watchedLoops [watcherSlots]atomic.Pointer[probeRecord]

	// taskLoops are the registered loops called from inside tasks, one
	// slot a cache line, so that the workers, which start from a slot of
	// their own (their index), do not contend for lines.
	taskLoops [taskSlots]struct {
		rec atomic.Pointer[taskRecord]
		_   [56]byte
	}

	// watcherRunning is true while a watcher goroutine is running (or
	// about to be started by the registration that set it).
	watcherRunning atomic.Bool
)

// registerProbe registers rec with the watcher and returns its slot, or -1
// if every slot is taken. It starts the watcher if none runs.
func registerProbe(rec *probeRecord) int {
	first := rand.Uint32() // spreads concurrent loops over the slots
	for i := range uint32(watcherSlots) {
		slot := int((first + i) % watcherSlots)
		if watchedLoops[slot].CompareAndSwap(nil, rec) {
			rec.seq.Add(1)
			startWatcher()
			return slot
		}
	}
	return -1
}

// startWatcher starts the watcher if none runs. Called after a
// registration (a sequentially consistent CAS), whose slot a watcher
// deciding to exit meanwhile sees.
func startWatcher() {
	if !watcherRunning.Load() && watcherRunning.CompareAndSwap(false, true) {
		go watchProbes()
	}
}

// registerTask makes sure rec, a loop called from inside a task whose
// cursor the caller has just opened, is in one of the task slots. A
// record stays in its slot after its loop has ended, so that the next
// loop of a recycled spec (For's, which sync.Pool tends to hand back to
// the same worker) finds itself registered and pays one load; the watcher
// clears the slots of records whose loop has ended at its next tick. A
// worker looks from a slot of its own (four per worker index, for nested
// loops), anyone else from a random one. If no slot is free, rec takes
// one whose record's loop has ended (or is shared already), as the
// watcher would clear it at its next tick: records of ended loops held
// every slot after taskSlots quick loops within a tick (Map, Reduce, ...
// make a record per call), and the next loop ran unwatched however long
// it took (TestTaskSlotsHeldByEndedLoops, review rev20). If every slot
// holds a running loop, rec runs unwatched, on its caller.
//
// The caller's open (a sequentially consistent store) comes before its
// loads here, and the watcher's clearing CAS before its load of the
// cursor (watchProbes): either the caller sees its record gone and
// registers it again, or the watcher sees the cursor open and puts the
// record back, possibly both (a record in two slots is harmless: the
// second share attempt finds the cursor shared). Taking an ended loop's
// slot follows the watcher's protocol: the CAS that takes it comes before
// the load of the evicted record's cursor, so if that record's caller has
// opened a new loop meanwhile, either it sees its record gone and
// registers it again, or it is put back here.
func registerTask(rec *taskRecord, w *forkjoin.Worker) {
	var first uint32
	if w != nil {
		first = uint32(w.Index()) * 4
	} else {
		first = rand.Uint32()
	}
	for i := range uint32(taskSlots) {
		slot := &taskLoops[(first+i)%taskSlots].rec
		switch slot.Load() {
		case rec:
			return
		case nil:
			if slot.CompareAndSwap(nil, rec) {
				startWatcher()
				return
			}
		}
	}
	for i := range uint32(taskSlots) {
		slot := &taskLoops[(first+i)%taskSlots].rec
		old := slot.Load()
		if old != nil && !taskOpen(old.cur.Load()) && slot.CompareAndSwap(old, rec) {
			if taskOpen(old.cur.Load()) {
				placeTask(old)
			}
			startWatcher()
			return
		}
	}
}

// placeTask puts rec in a free task slot, if any (the watcher's side of
// registerTask).
func placeTask(rec *taskRecord) {
	for i := range taskLoops {
		if taskLoops[i].rec.CompareAndSwap(nil, rec) {
			return
		}
	}
}

// unregisterProbe frees the slot registerProbe returned (-1: none).
func unregisterProbe(slot int) {
	if slot >= 0 {
		watchedLoops[slot].Store(nil)
	}
}

// watchProbes is the watcher goroutine. seen[i] is the loop slot i held at
// the previous tick (only this goroutine reads or writes seen): a record
// and its registration count, since a recycled record (For's) may come
// back in the same slot for another loop; a loop still there at this tick
// has run for at least a tick and is handed over.
func watchProbes() {
	tick := time.NewTicker(watcherTick)
	defer tick.Stop()
	type registration struct {
		rec *probeRecord
		seq uint64
	}
	var seen [watcherSlots]registration
	type taskRegistration struct {
		rec *taskRecord
		gen uint64
	}
	var seenTasks [taskSlots]taskRegistration
	idle := 0
	for range tick.C {
		found := false
		for i := range watchedLoops {
			now := registration{rec: watchedLoops[i].Load()}
			if now.rec != nil {
				found = true
				now.seq = now.rec.seq.Load()
				if now == seen[i] {
					now.rec.handOver()
				}
			}
			seen[i] = now
		}
		for i := range taskLoops {
			now := taskRegistration{rec: taskLoops[i].rec.Load()}
			if now.rec != nil {
				found = true
				c := now.rec.cur.Load()
				now.gen = c >> tpGenShift
				switch {
				case !taskOpen(c):
					// Ended, or shared: clear the slot, and put the
					// record back if its caller opened a new loop
					// meanwhile (see registerTask).
					if taskLoops[i].rec.CompareAndSwap(now.rec, nil) && taskOpen(now.rec.cur.Load()) {
						placeTask(now.rec)
					}
					now = taskRegistration{}
				case now == seenTasks[i]:
					now.rec.owner.share(c)
				}
			}
			seenTasks[i] = now
		}
		if found {
			idle = 0
			continue
		}
		if idle++; idle < watcherIdleTicks {
			continue
		}
		watcherRunning.Store(false)
		// A loop registered before the store above may have seen the
		// watcher running and started none: look once more.
		if !anyWatched() || !watcherRunning.CompareAndSwap(false, true) {
			return
		}
		idle = 0
	}
}

// anyWatched reports whether some loop is registered.
func anyWatched() bool {
	for i := range watchedLoops {
		if watchedLoops[i].Load() != nil {
			return true
		}
	}
	for i := range taskLoops {
		if taskLoops[i].rec.Load() != nil {
			return true
		}
	}
	return false
}
