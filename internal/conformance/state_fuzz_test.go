package conformance

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzRequestState checks the signed requestState of multi round-trip
// requests against any client-supplied state: a state this process
// signed verifies for its own tool only and comes back as signed; any
// other text is refused with -32602, unless its signed body is one this
// process signed (base64 ignores the unused trailing bits of the
// signature, so a few spellings of one state verify); nothing panics.
func FuzzRequestState(f *testing.F) {
	g := newStateSigner()
	good := g.sign(roundState{Tool: "t", Round: 2, Answers: map[string]json.RawMessage{"q": json.RawMessage(`{"a":1}`)}})
	f.Add("t", 2, `{"a":1}`, good)
	f.Add("t", 0, `null`, good+"x")
	f.Add("other", 1, `"s"`, "."+good)
	f.Add("t", -1, `[]`, strings.Replace(good, ".", "..", 1))
	f.Add("t", 3, `1`, "e30.AAAA")
	f.Fuzz(func(t *testing.T, tool string, round int, answer string, state string) {
		if !utf8.ValidString(tool) {
			return // tool names are the server's own (ASCII) constants
		}
		if !json.Valid([]byte(answer)) {
			answer = `null`
		}
		st := roundState{Tool: tool, Round: round, Answers: map[string]json.RawMessage{"q": json.RawMessage(answer)}}
		signed := g.sign(st)
		back, err := g.verify(signed, tool)
		if err != nil {
			t.Fatalf("a state just signed for %q is refused: %v", tool, err)
		}
		if back.Tool != tool || back.Round != round || len(back.Answers) != 1 || !jsonEqual(back.Answers["q"], st.Answers["q"]) {
			t.Fatalf("round trip changed the state: %+v → %+v", st, back)
		}
		if _, err := g.verify(signed, tool+"x"); err == nil {
			t.Fatalf("a state signed for %q verified for %q", tool, tool+"x")
		}
		if _, err := newStateSigner().verify(signed, tool); err == nil {
			t.Fatal("a state verified under another process's key")
		}
		// The MAC covers the encoded body before the first ".": a state
		// that verifies must carry a body this process signed, and the
		// only ones the fuzzer can know are the seed's and this round's.
		if got, err := g.verify(state, tool); err == nil {
			body, _, _ := strings.Cut(state, ".")
			if body != bodyOf(good) && body != bodyOf(signed) {
				t.Fatalf("forged state %q accepted: %+v", state, got)
			}
		}
	})
}

// jsonEqual compares two JSON texts by value.
func jsonEqual(a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	ja, _ := json.Marshal(va)
	jb, _ := json.Marshal(vb)
	return bytes.Equal(ja, jb)
}

// bodyOf is the signed body of a state (before the first ".").
func bodyOf(state string) string {
	body, _, _ := strings.Cut(state, ".")
	return body
}
