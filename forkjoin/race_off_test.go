//go:build !race

package forkjoin

const raceEnabled = false
