//go:build race

package forkjoin

const raceEnabled = true
