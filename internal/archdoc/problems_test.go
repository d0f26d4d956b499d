package archdoc

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRowProblemsNameTheFix runs the checks on a made-up module: a
// package without a row, a row for a moved package, a row for a directory
// of Go files go list does not know, a row for a directory without Go
// (allowed), and a doubled row; and the generated table's levels.
func TestRowProblemsNameTheFix(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"engine", "templates", "stray", "e2e/test"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "stray", "x.go"), []byte("//go:build never\n\npackage stray\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pkgs := []pkg{
		{name: ".", path: "m", imports: []string{"templates/"}},
		{name: "engine/", path: "m/engine"},
		{name: "templates/", path: "m/templates", imports: []string{"engine/"}},
	}
	hand := "| package | owns |\n| --- | --- |\n" +
		"| `.` | main.go |\n" +
		"| `engine/`, `htmlextract/` | the domain; `cli/app.go` is no directory |\n" +
		"| `stray/` | x |\n| `e2e/` | no Go |\n| `engine/` | again |\n"
	names := handNames(hand)
	if want := []string{".", "engine/", "htmlextract/", "stray/", "e2e/", "engine/"}; !slices.Equal(names, want) {
		t.Fatalf("handNames = %q, want %q", names, want)
	}
	got := rowProblems(root, pkgs, names)
	want := []string{
		"`engine/` has two rows in the Packages table: keep one",
		"package m/templates (directory `templates/`) has no row in the Packages table: add a line\n\t| `templates/` |",
		"names `htmlextract/`, but there is no such directory: it was moved or removed",
		"names `stray/`, a directory with Go files that `go list ./...` does not report as a package",
	}
	if len(got) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("problem %d = %q, want it to contain %q", i, got[i], w)
		}
	}

	table := importTable(pkgs)
	wantTable := "| level | package | imports (of ours, non-test) |\n| --- | --- | --- |\n" +
		"| 0 | `engine/` | none |\n| 1 | `templates/` | `engine/` |\n| 2 | `.` | `templates/` |\n"
	if table != wantTable {
		t.Errorf("importTable =\n%s\nwant\n%s", table, wantTable)
	}
	if d := rowDiff(wantTable, strings.Replace(wantTable, "| 0 | `engine/` | none |", "| 0 | `engine/` | `x/` |", 1)); !strings.Contains(d, "- | 0 | `engine/` | none |") || !strings.Contains(d, "+ | 0 | `engine/` | `x/` |") {
		t.Errorf("rowDiff does not show the changed row:\n%s", d)
	}
}
