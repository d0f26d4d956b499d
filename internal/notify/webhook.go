package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// SignatureHeader carries the webhook body's signature:
// "sha256=" + hex(HMAC-SHA256(secret, body)). A receiver computes the same
// over the raw body it got, compares in constant time (Verify), and
// refuses a Summary whose "at" is old, so a captured body cannot be
// replayed later.
const SignatureHeader = "X-Browsertask-Signature"

// EventHeader repeats the Summary's event for receivers that route on
// headers.
const EventHeader = "X-Browsertask-Event"

// Webhook POSTs summaries as JSON to URL.
type Webhook struct {
	URL string
	// Secret signs every body; empty sends no signature (the receiver
	// then cannot tell a forged notification from ours).
	Secret []byte
	// Client sends the requests (nil: a client with a 10 s timeout).
	Client *http.Client
	// Attempts is how many times a delivery is tried (0: 5).
	Attempts int
	// Backoff is the wait before the second attempt, doubled each time
	// after (0: 500 ms).
	Backoff time.Duration
}

// Sign returns the SignatureHeader value for body under secret.
func Sign(secret, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify reports whether signature is body's under secret, in constant
// time: what a receiver calls.
func Verify(secret, body []byte, signature string) bool {
	return hmac.Equal([]byte(Sign(secret, body)), []byte(signature))
}

// Send delivers s, trying again after a network error, a 429 or a 5xx
// with a doubling wait; any other answer but 2xx is final (the receiver
// refused it: sending the same body again would not change that). Errors
// say the last answer and how many attempts were made.
func (w Webhook) Send(ctx context.Context, s Summary) error {
	body, err := json.Marshal(s)
	if err != nil {
		return err
	}
	client := w.Client
	if client == nil {
		client = &http.Client{Timeout: 10 * time.Second}
	}
	attempts := w.Attempts
	if attempts <= 0 {
		attempts = 5
	}
	wait := w.Backoff
	if wait <= 0 {
		wait = 500 * time.Millisecond
	}
	var last error
	for i := 1; i <= attempts; i++ {
		retry, err := w.post(ctx, client, body, s.Event)
		if err == nil {
			return nil
		}
		last = err
		if !retry || i == attempts {
			return fmt.Errorf("webhook %s: %w (attempt %d of %d)", w.URL, last, i, attempts)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("webhook %s: %w (gave up after attempt %d: %v)", w.URL, last, i, ctx.Err())
		case <-t.C:
		}
		wait *= 2
	}
	return last
}

// post makes one attempt; retry says whether another may succeed.
func (w Webhook) post(ctx context.Context, client *http.Client, body []byte, ev Event) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.URL, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "browsertask-notify")
	req.Header.Set(EventHeader, string(ev))
	if len(w.Secret) > 0 {
		req.Header.Set(SignatureHeader, Sign(w.Secret, body))
	}
	resp, err := client.Do(req)
	if err != nil {
		return ctx.Err() == nil, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return true, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return false, fmt.Errorf("HTTP %d (refused: not tried again)", resp.StatusCode)
}
