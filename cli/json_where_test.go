package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// FuzzJSONProblem feeds jsonProblem whatever a flag or a file may hold:
// it never panics, and every malformed text is located by line and
// column within the text.
func FuzzJSONProblem(f *testing.F) {
	for _, s := range []string{`{"a": }`, "{\n\"a\":1\n\"b\":2}", `[1,2`, `"é`, "{\"é\":\n\n 1,}", ``, `nul`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var v any
		err := json.Unmarshal(b, &v)
		if err == nil {
			return
		}
		msg := jsonProblem(b, err)
		if !strings.HasPrefix(msg, "line ") {
			t.Fatalf("%q: %q does not say where", b, msg)
		}
		lines := strings.Count(string(b), "\n") + 1
		var line, col int
		if _, err := fmtSscanf(msg, &line, &col); err != nil || line < 1 || line > lines || col < 1 {
			t.Fatalf("%q: %q: line %d col %d of %d lines", b, msg, line, col, lines)
		}
	})
}

// fmtSscanf reads "line L, column C" from the start of msg.
func fmtSscanf(msg string, line, col *int) (int, error) {
	return fmt.Sscanf(msg, "line %d, column %d", line, col)
}
