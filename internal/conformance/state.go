package conformance

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
	"time"
)

// requestState of a multi round-trip request (SEP-2322) carries what the
// earlier rounds gathered, so the server keeps nothing between rounds. It
// is integrity-protected: base64url(JSON) "." base64url(HMAC-SHA256) under
// a key drawn when the server starts, so a state is good in the process
// that issued it, for stateTTL; a tampered, foreign or stale one is
// refused with -32602 and the client starts the request over.

// stateTTL is how long a requestState is accepted.
const stateTTL = 10 * time.Minute

// roundState is what a requestState carries.
type roundState struct {
	Tool    string                     `json:"t"`
	Round   int                        `json:"r"`
	Answers map[string]json.RawMessage `json:"a,omitempty"`
	Expires int64                      `json:"e"`
}

// stateSigner signs and checks requestState.
type stateSigner struct {
	key []byte
}

// newStateSigner draws a fresh key.
func newStateSigner() *stateSigner {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand.Read never fails (Go 1.24+)
	return &stateSigner{key: key}
}

// sign encodes st.
func (g *stateSigner) sign(st roundState) string {
	st.Expires = time.Now().Add(stateTTL).UnixMilli()
	body, _ := json.Marshal(st)
	enc := base64.RawURLEncoding.EncodeToString(body)
	return enc + "." + base64.RawURLEncoding.EncodeToString(g.mac(enc))
}

// verify decodes a state signed for tool. Errors: -32602 naming what is
// wrong.
func (g *stateSigner) verify(state, tool string) (roundState, error) {
	enc, sig, ok := strings.Cut(state, ".")
	want := g.mac(enc)
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err != nil || !hmac.Equal(got, want) {
		return roundState{}, errInvalidParams("requestState failed its integrity check: send the requestState of the last input_required answer unchanged, or call %s again without it", tool)
	}
	body, err := base64.RawURLEncoding.DecodeString(enc)
	var st roundState
	if err != nil || json.Unmarshal(body, &st) != nil || st.Tool != tool {
		return roundState{}, errInvalidParams("requestState does not belong to a call of %s: call it again without requestState", tool)
	}
	if time.Now().UnixMilli() > st.Expires {
		return roundState{}, errInvalidParams("requestState has expired (older than %s): call %s again without it", stateTTL, tool)
	}
	return st, nil
}

func (g *stateSigner) mac(s string) []byte {
	m := hmac.New(sha256.New, g.key)
	m.Write([]byte(s))
	return m.Sum(nil)
}
