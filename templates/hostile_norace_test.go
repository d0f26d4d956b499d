//go:build !race

package templates

// sweepSlowdown stretches the hostile sweep's page deadline (see
// hostile_race_test.go); 1 without the race detector.
const sweepSlowdown = 1
