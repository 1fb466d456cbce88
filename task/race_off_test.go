//go:build !race

package task_test

// raceEnabled is true under -race; see race_on_test.go.
const raceEnabled = false
