package task

import (
	"strconv"

	"github.com/magpie-go/magpie/forkjoin"
)

// Cutoff decides whether a divide-and-conquer task of size n should split
// (fork subtasks) or solve its part sequentially. A good cutoff keeps
// enough tasks around for idle workers to steal and no more: each fork
// costs tens of nanoseconds, a leaf should cost microseconds.
type Cutoff interface {
	// Split reports whether a problem of size n, about to be solved on w,
	// should be split.
	Split(w *forkjoin.Worker, n int) bool
}

// Fixed returns a cutoff that splits while n > grain. Use it when the cost
// per element is known and uniform: pick a grain whose sequential leaf takes
// roughly 10 to 100 microseconds. grain < 1 is taken as 1.
func Fixed(grain int) Cutoff { return fixed(max(grain, 1)) }

type fixed int

func (g fixed) Split(_ *forkjoin.Worker, n int) bool { return n > int(g) }

// String returns "Fixed(grain)", for logs and benchmark names.
func (g fixed) String() string { return "Fixed(" + strconv.Itoa(int(g)) + ")" }

// AdaptiveFloor is the size below which Adaptive never splits: a fork costs
// about as much as a few cheap elements, so smaller leaves cannot pay off.
const AdaptiveFloor = 16

// adaptiveSurplus is the surplus of queued tasks at which Adaptive stops
// splitting, the threshold Java's ForkJoin documentation recommends for
// getSurplusQueuedTaskCount.
const adaptiveSurplus = 3

// Adaptive returns a cutoff that needs no tuning: it splits while the
// worker has no surplus of queued work that idle thieves could take
// (Worker.Surplus below 3), and never below AdaptiveFloor elements. When
// every worker is busy, tasks stop splitting and run sequentially at full
// speed; as soon as a worker goes idle, splitting resumes where the thief
// needs it. Use it when the cost per element is unknown or irregular.
//
// The tree it produces depends on timing. Splitting is not free of waste:
// a worker that pops its own queued task finds its surplus low again and
// splits that task once more, so a run leaves a trail of ever smaller
// leaves down to the floor (on one worker, summing 2^24 elements forks
// about 1,350 times where no fork was needed; on two, about 3,300 times
// where Fixed(2^14) forks 1,023). Each such fork costs tens of
// nanoseconds un-stolen, well under 1% of the run; a lower threshold
// would fork less but leave thieves too little to take when the machine is
// shared or the work irregular.
func Adaptive() Cutoff { return adaptive{} }

type adaptive struct{}

// String returns "Adaptive()".
func (adaptive) String() string { return "Adaptive()" }

func (adaptive) Split(w *forkjoin.Worker, n int) bool {
	return n > AdaptiveFloor && w.Surplus() < adaptiveSurplus
}
