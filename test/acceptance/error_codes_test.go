package acceptance

// The v1 contract asks that every one of the 16
// error codes is provoked through the MCP interface by at least one
// black-box test. errorCodeTests is the map (also in docs/error-codes.md);
// TestErrorCodeCoverage keeps it honest: every code is listed, every test
// named exists, and its body checks for that code.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// errorCodeTests maps each contract error code to the black-box tests (Test
// or Test/subtest) that provoke it through MCP and assert it.
var errorCodeTests = map[engine.ErrorCode][]string{
	engine.ElementNotFound:            {"TestBlackboxTemplates/run_steps"},
	engine.NavigationTimeout:          {"TestBlackboxBrowserErrors/navigation_timeout", "TestBlackboxTemplates/run_steps"},
	engine.SessionNotFound:            {"TestBlackboxErrors/not_found", "TestBlackboxSessionsAndLogin", "TestBlackboxSessionIdleExpiry"},
	engine.PageCrashed:                {"TestBlackboxRemoteBrowser"},
	engine.InvalidParameter:           {"TestBlackboxErrors/invalid_parameter", "TestBlackboxTemplates/url_policy", "TestBlackboxSessionsAndLogin"},
	engine.ExecutionError:             {"TestBlackboxInterrupted", "TestBlackboxBrowserKilled"},
	engine.TemplateNotFound:           {"TestBlackboxErrors/not_found"},
	engine.RunNotFound:                {"TestBlackboxErrors/not_found"},
	engine.RunTimeout:                 {"TestBlackboxErrors/timeout", "TestBlackboxBrowserErrors/run_timeout_hang"},
	engine.RunCanceled:                {"TestBlackboxErrors/canceled"},
	engine.StepExecutionFailed:        {"TestBlackboxErrors/step_failed", "TestBlackboxSessionsAndLogin"},
	engine.TrustLevelNotAllowed:       {"TestBlackboxRestricted", "TestBlackboxRemoteBrowser"},
	engine.TemplateVersionUnsupported: {"TestBlackboxErrors/not_found", "TestBlackboxTemplates/versions"},
	engine.ArtifactNotFound:           {"TestBlackboxErrors/not_found"},
	engine.ArtifactExpired:            {"TestBlackboxArtifactExpired"},
	engine.TplLoginFieldNotFound:      {"TestBlackboxSessionsAndLogin"},
}

// testSources returns, per top-level test function of this package, the
// source text of its body.
func testSources(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string]string{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(fset, f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range af.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
				out[fn.Name.Name] = string(src[fset.Position(fn.Body.Pos()).Offset:fset.Position(fn.Body.End()).Offset])
			}
		}
	}
	return out
}

func TestErrorCodeCoverage(t *testing.T) {
	if len(errorCodeTests) != len(engine.AllErrorCodes) {
		t.Fatalf("the table has %d codes, the contract %d", len(errorCodeTests), len(engine.AllErrorCodes))
	}
	src := testSources(t)
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "error-codes.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, code := range engine.AllErrorCodes {
		tests := errorCodeTests[code]
		if len(tests) == 0 {
			t.Errorf("%s: no test provokes it", code)
		}
		for _, name := range tests {
			top, subtest, _ := strings.Cut(name, "/")
			body, ok := src[top]
			if !ok {
				t.Errorf("%s: test %s does not exist", code, top)
				continue
			}
			if subtest != "" && !strings.Contains(body, `t.Run("`+subtest+`"`) {
				t.Errorf("%s: %s has no subtest %q", code, top, subtest)
			}
			if !strings.Contains(body, `"`+string(code)+`"`) {
				t.Errorf("%s: %s never checks for this code", code, top)
			}
			if !strings.Contains(string(doc), name) {
				t.Errorf("%s: docs/error-codes.md does not list %s", code, name)
			}
		}
	}
}
