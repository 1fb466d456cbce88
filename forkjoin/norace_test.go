//go:build !race

package forkjoin_test

// raceEnabled trims the largest stress loops under the race detector, which
// slows them about tenfold.
const raceEnabled = false
