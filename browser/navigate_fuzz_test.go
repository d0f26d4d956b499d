package browser

import (
	"encoding/json"
	"net/http"
	"testing"
)

// FuzzParseNavInfo decodes any value as the answer of navInfoJS, which a
// page can shape (it may redefine performance.getEntriesByType, and the
// then expression reads the page). Invariants: decoding never fails
// loudly; a reason phrase comes only with a positive status and is that
// status's; the then value returned is JSON, never null and never the
// wrapper of a thrown error.
func FuzzParseNavInfo(f *testing.F) {
	for _, s := range []string{
		`[200,"http://127.0.0.1/x"]`, `[404,"http://a/",{"k":[1,2]}]`, `[0,"file:///x",null]`,
		`[302,"http://a/",{"__browsertaskThenError":"boom"}]`, `[-1,7,"x"]`, `[1e99,"u",1]`, `{}`, `[]`, `[200]`,
		`["200","u",{"__browsertaskThenError":null}]`, `null`, `[200,"u",{"__browsertaskThenError":"x","v":1}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		r, then := parseNavInfo(json.RawMessage(raw))
		if r.StatusText != "" && (r.Status <= 0 || r.StatusText != http.StatusText(r.Status)) {
			t.Fatalf("status %d with reason %q", r.Status, r.StatusText)
		}
		if then == nil {
			return
		}
		if !json.Valid(then) || string(then) == "null" {
			t.Fatalf("then value %q is not a JSON value", then)
		}
		var failed struct {
			Err *string `json:"__browsertaskThenError"`
		}
		if json.Unmarshal(then, &failed) == nil && failed.Err != nil {
			t.Fatalf("then value %s is a thrown error's wrapper", then)
		}
	})
}
