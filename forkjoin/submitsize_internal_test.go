package forkjoin

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// TestSubmissionSize: a Submit allocates one object, its submission (the
// cell, the task and the Future together), and that object fits the
// 192-byte size class for an int result and a closure: it embedded a
// taskCell before, whose two free-list links a submission never uses, and
// took 208 bytes (the next class). Its allocation count is forkjoin's
// BenchmarkSubmit1M "submit" rows and task's
// TestExecuteSteadyStateAllocatesNothing (1 per SubmitAction).
func TestSubmissionSize(t *testing.T) {
	assert.LessOrEqual(t, unsafe.Sizeof(submission[int, funcTask[int]]{}), uintptr(192))
	assert.LessOrEqual(t, unsafe.Sizeof(submission[struct{}, funcTask[struct{}]]{}), uintptr(176))
}
