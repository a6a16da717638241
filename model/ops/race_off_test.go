//go:build !race

package ops

// raceEnabled reports whether the race detector is on (it makes sync.Pool
// drop entries, so allocation counts are not representative).
const raceEnabled = false
