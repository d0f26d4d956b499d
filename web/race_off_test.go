//go:build !race

package web_test

// raceEnabled is true when the race detector is on (it slows SQLite ~30x).
const raceEnabled = false
