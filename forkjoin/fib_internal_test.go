package forkjoin

// Helpers for the white-box tests of this package (package forkjoin); the
// black-box suite (package forkjoin_test) has its own in util_test.go.

// fibTask is a typed task forking at every level through JoinTasks.
type fibTask int

func (t fibTask) Compute(w *Worker) int {
	n := int(t)
	if n < 2 {
		return n
	}
	a, b := JoinTasks[int, int](w, fibTask(n-1), fibTask(n-2))
	return a + b
}
