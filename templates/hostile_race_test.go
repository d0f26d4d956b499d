//go:build race

package templates

// sweepSlowdown stretches the hostile sweep's page deadline under the race
// detector, which slows the egress proxy, the request interception and
// the fixture servers several times over.
const sweepSlowdown = 2
