// Package netpolicy is the one network policy of browsertask: which
// addresses trust "restricted" refuses (Classify), and the one dialer that
// resolves a host, checks every address of the answer and connects only to
// an address it checked (Dialer). The submission check and the in-browser
// request check (engine.CheckURL), the plain-HTTP fetch path (internal/extract/fetch)
// and the egress proxy of launched browsers (browser/egress) all decide
// with Classify, and the last two connect with Dialer, so no door of the
// daemon knows a range the others do not.
//
// It is a leaf: it imports nothing of ours, so engine can build on it.
package netpolicy

import "strings"

// The trust levels a server runs at (--trust). They are spelled here once;
// every package compares with IsRestricted.
const (
	// Local lets runs reach anything the machine can reach except the
	// daemon's own listener (the default: the user's own browser).
	Local = "local"
	// Restricted refuses every internal address Classify knows, the
	// machine's own addresses and hosts whose addresses cannot be checked.
	Restricted = "restricted"
)

// IsRestricted reports whether level is trust restricted (any case), the
// one comparison every package uses so a spelling cannot drift.
func IsRestricted(level string) bool { return strings.EqualFold(strings.TrimSpace(level), Restricted) }
