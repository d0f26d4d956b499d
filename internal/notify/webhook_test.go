package notify

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestWebhookRetriesOnlyWhatMaySucceed(t *testing.T) {
	for _, c := range []struct {
		status   int
		attempts int32
		want     string
	}{
		{http.StatusServiceUnavailable, 3, "HTTP 503 (attempt 3 of 3)"},
		{http.StatusTooManyRequests, 3, "HTTP 429 (attempt 3 of 3)"},
		{http.StatusBadRequest, 1, "HTTP 400 (refused: not tried again) (attempt 1 of 3)"},
		{http.StatusNoContent, 1, ""},
	} {
		var n atomic.Int32
		var body []byte
		var sig, event string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			body, _ = io.ReadAll(r.Body)
			sig, event = r.Header.Get(SignatureHeader), r.Header.Get(EventHeader)
			w.WriteHeader(c.status)
		}))
		s := Summary{Event: Ended, RunID: "run_1", TemplateID: "t", Status: "succeeded", At: 1}
		err := Webhook{URL: srv.URL, Secret: []byte("k"), Attempts: 3, Backoff: time.Millisecond}.Send(context.Background(), s)
		srv.Close()
		if got := n.Load(); got != c.attempts || (c.want == "") != (err == nil) || (err != nil && !strings.HasSuffix(err.Error(), c.want)) {
			t.Errorf("HTTP %d: %d attempts, err %v; want %d, %q", c.status, got, err, c.attempts, c.want)
		}
		var back Summary
		if json.Unmarshal(body, &back) != nil || back.RunID != "run_1" || event != "run.ended" || !Verify([]byte("k"), body, sig) {
			t.Errorf("HTTP %d: body %s event %q sig %q", c.status, body, event, sig)
		}
	}
}

func TestWebhookWithoutSecretSendsNoSignature(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get(SignatureHeader)
	}))
	defer srv.Close()
	if err := (Webhook{URL: srv.URL}).Send(context.Background(), Summary{Event: Waiting}); err != nil {
		t.Fatal(err)
	}
	if s := <-got; s != "" {
		t.Fatalf("signature %q without a secret", s)
	}
	// Signatures are hex HMAC-SHA256 with the sha256= prefix.
	if s := Sign([]byte("key"), []byte("body")); s != "sha256=515aae133b435d4000956731f68ae5cf5eb85d4f0dc6a546d2bfcd3595ec1ae1" {
		t.Fatalf("Sign = %q", s)
	}
}
