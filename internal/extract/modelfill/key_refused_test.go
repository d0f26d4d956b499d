package modelfill

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestRefusedKeyEchoedReencodedNotKept (issue 26, item 11): a server that
// answers 401 or 403 and echoes the key re-encoded (base64, upper case,
// hex) — where no redaction can find it — gets none of its words into the
// error (which the run stores) or the log: the error is the status and a
// fixed explanation naming --model-key-file.
func TestRefusedKeyEchoedReencodedNotKept(t *testing.T) {
	echoes := []string{
		base64.StdEncoding.EncodeToString([]byte(secretKey)),
		base64.RawURLEncoding.EncodeToString([]byte(secretKey)),
		strings.ToUpper(secretKey),
		hex.EncodeToString([]byte(secretKey)),
	}
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		var logs bytes.Buffer
		srv, client := newScripted(t, "", &logs)
		srv.status = status
		srv.errBody = `{"error":{"message":"key ` + strings.Join(echoes, " / ") + ` is not valid for this org","type":"invalid_request_error","code":"` + echoes[0] + `"}}`
		_, err := client.Sample(context.Background(), SampleRequest{Messages: []Message{{Role: "user", Content: "hi"}}})
		if err == nil {
			t.Fatalf("HTTP %d: no error", status)
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, client.String()+" answered HTTP "+strconv.Itoa(status)+": the server refused the API key") ||
			!strings.Contains(msg, "--model-key-file") {
			t.Errorf("HTTP %d: error = %q, want the status and the fixed explanation naming --model-key-file", status, msg)
		}
		for _, leak := range append(echoes, "not valid for this org", "invalid_request_error") {
			if strings.Contains(msg, leak) {
				t.Errorf("HTTP %d: the error holds the server's %q: %s", status, leak, msg)
			}
			if strings.Contains(logs.String(), leak) {
				t.Errorf("HTTP %d: the log holds the server's %q", status, leak)
			}
		}
	}
}
