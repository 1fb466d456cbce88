//go:build !race

package deque_test

// raceEnabled sizes the stress tests: the race detector slows them ~10x.
const raceEnabled = false
