//go:build race

package magpie

// raceEnabled shrinks the largest sizes of the white-box tests under the
// race detector, which slows them down about tenfold.
const raceEnabled = true
