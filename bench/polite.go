package main

import "github.com/browsertask/browsertask/internal/extract/hostgate"

// perHost is the perHostConcurrency the benchmarks ask for: as many as
// their tabs (up to the gate's maximum). Their fixture sites are one
// loopback host, and what they measure is the engine against a bare
// baseline with the same tabs, not the politeness default (2 per host),
// which would cap both runs at 2 pages in flight.
func perHost(tabs int) int { return min(max(tabs, 1), hostgate.MaxPerHost) }
