package forkjoin

// Hooks for the external tests: read-only views of state that no exported
// API shows, each one atomic load (safe from any goroutine).

// SleepersOf reports how many of p's workers are registered as asleep or
// about to sleep.
func SleepersOf(p *Pool) int { return p.sleepers.Count() }

// PublicLen reports how many tasks thieves can see in w's deque.
func PublicLen(w *Worker) int { return w.deque.Len() }
