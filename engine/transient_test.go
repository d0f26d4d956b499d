package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"syscall"
	"testing"
	"time"
)

// TestTransientClassifiesWhatARetryCanChange: the statuses and network
// failures a second attempt may not meet are transient; the page's own
// answers, policy refusals and cancellation are not.
func TestTransientClassifiesWhatARetryCanChange(t *testing.T) {
	reset := Wrap(StepExecutionFailed, fmt.Errorf("read: %w", syscall.ECONNRESET), "navigation failed").
		WithDetails(map[string]any{"url": "u", "netError": "read tcp: connection reset by peer"})
	cases := []struct {
		name   string
		status int
		err    error
		want   bool
	}{
		{"429", 429, nil, true}, {"503", 503, nil, true}, {"502", 502, nil, true},
		{"504", 504, nil, true}, {"408", 408, nil, true},
		{"200", 200, nil, false}, {"404", 404, nil, false}, {"500", 500, nil, false}, {"403", 403, nil, false},
		{"reset", 0, reset, true},
		{"chromium reset", 0, Errorf(StepExecutionFailed, "x").WithDetails(map[string]any{"netError": "net::ERR_CONNECTION_RESET"}), true},
		{"chromium empty", 0, Errorf(StepExecutionFailed, "x").WithDetails(map[string]any{"netError": "net::ERR_EMPTY_RESPONSE"}), true},
		{"chromium dns", 0, Errorf(StepExecutionFailed, "x").WithDetails(map[string]any{"netError": "net::ERR_NAME_NOT_RESOLVED"}), false},
		{"timeout", 0, Errorf(NavigationTimeout, "slow"), true},
		{"status in details", 0, Errorf(StepExecutionFailed, "503").WithDetails(map[string]any{"httpStatus": 503}), true},
		{"404 in details", 0, Errorf(StepExecutionFailed, "404").WithDetails(map[string]any{"httpStatus": 404}), false},
		{"policy", 0, Errorf(TrustLevelNotAllowed, "internal"), false},
		{"blocked redirect", 0, Errorf(StepExecutionFailed, "x").WithDetails(map[string]any{"blockedUrl": "u", "policy": "scheme"}), false},
		{"invalid", 0, Errorf(InvalidParameter, "x"), false},
		{"canceled", 0, context.Canceled, false},
		{"bare refused", 0, syscall.ECONNREFUSED, true},
		{"bare other", 0, errors.New("no"), false},
	}
	for _, c := range cases {
		if got := Transient(c.status, c.err); got != c.want {
			t.Errorf("%s: Transient = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestRetryAfterReadsSecondsAndDates: both forms of the header, and the
// values that are not one.
func TestRetryAfterReadsSecondsAndDates(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"1": time.Second, " 120 ": 2 * time.Minute, "0": 0,
		now.Add(90 * time.Second).Format(http.TimeFormat): 90 * time.Second,
		now.Add(-time.Hour).Format(http.TimeFormat):       0,
	} {
		if d, ok := RetryAfter(v, now); !ok || d != want {
			t.Errorf("RetryAfter(%q) = %v, %v; want %v, true", v, d, ok, want)
		}
	}
	for _, v := range []string{"", "-1", "soon", "1.5"} {
		if d, ok := RetryAfter(v, now); ok {
			t.Errorf("RetryAfter(%q) = %v, true; want not ok", v, d)
		}
	}
}

// FuzzRetryAfter: a server's header never panics the reader, and what it
// accepts is a wait of at least 0.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"1", "Wed, 21 Oct 2015 07:28:00 GMT", "", "99999999999999999999", "-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if d, ok := RetryAfter(v, time.Unix(0, 0)); ok && d < 0 {
			t.Fatalf("RetryAfter(%q) = %v", v, d)
		}
	})
}
