//go:build !race

package magpie

// raceEnabled: see race_on_internal_test.go.
const raceEnabled = false
