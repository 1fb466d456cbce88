//go:build !race

package magpie_test

// sortRaceEnabled shrinks the large sort tests under the race detector,
// which slows them down about tenfold.
const sortRaceEnabled = false
