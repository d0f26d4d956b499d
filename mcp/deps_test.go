package mcp

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestServerDoesNotImportTheFixtures: the production server builds
// without the conformance fixtures and the dev templates; they plug in
// through ServerOptions.Plugin from the cli. `go list -deps` (the
// package's own imports, transitively, tests left out) shows neither,
// nor any extraction package.
func TestServerDoesNotImportTheFixtures(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: cannot run go list -deps ./mcp (add $(go env GOROOT)/bin to PATH)")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps .: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/browsertask/browsertask/engine") {
		t.Fatalf("go list -deps . does not list engine, which mcp imports: %v", deps)
	}
	for _, pkg := range []string{
		"github.com/browsertask/browsertask/internal/conformance",
		"github.com/browsertask/browsertask/internal/devtpl",
	} {
		if slices.Contains(deps, pkg) {
			t.Errorf("mcp depends on %s: plug it in through ServerOptions.Plugin instead", pkg)
		}
	}
	// The server speaks the protocol; extraction is the templates' business
	// (a sampling refusal's shape is engine.SamplingRefusal, shared by both).
	for _, pkg := range deps {
		if strings.HasPrefix(pkg, "github.com/browsertask/browsertask/internal/extract") {
			t.Errorf("mcp depends on %s: the server must not reach into extraction; share the type through engine", pkg)
		}
	}
}
