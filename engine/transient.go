package engine

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// TransientStatus reports whether an HTTP status says "try again later"
// rather than "no": 408 Request Timeout, 429 Too Many Requests, 502 Bad
// Gateway, 503 Service Unavailable and 504 Gateway Timeout. Every other
// status, 500 included (a server bug answers the same again), is the
// page's answer and is not retried.
func TransientStatus(status int) bool {
	switch status {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// Transient is the one rule of what a page fetch retries, on both paths
// (HTTP fetch and browser navigation): a transient status
// (TransientStatus), or a failure of the network rather than of the
// request — a connection reset, refused or closed before an answer, an
// empty response, a timeout (NAVIGATION_TIMEOUT, a net.Error that timed
// out, Chromium's net::ERR_TIMED_OUT…). It is false for everything the
// same request would get again: other statuses, a refusal by the URL
// policy (TRUST_LEVEL_NOT_ALLOWED, or any error whose details name a
// blockedUrl), invalid input, a page that is not HTML, an extraction
// error, and the caller's own cancellation (context.Canceled).
//
// A resubmission redoes every page that failed, transient or not (only
// succeeded pages are adopted, engine/adopt.go): a page refused yesterday
// may be allowed by today's inputs, so the resubmission decides nothing
// here; within one run, Transient decides what is tried again.
func Transient(status int, err error) bool {
	if err == nil {
		return TransientStatus(status)
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	var e *Error
	if errors.As(err, &e) {
		switch e.Code {
		case NavigationTimeout:
			return true
		case StepExecutionFailed:
		default:
			return false
		}
		if _, refused := e.Details["blockedUrl"]; refused {
			return false
		}
		if st, ok := e.Details["httpStatus"].(int); ok {
			return TransientStatus(st)
		}
		if ne, ok := e.Details["netError"].(string); ok && transientNetError(ne) {
			return true
		}
		if e.Err == nil {
			return false
		}
		err = e.Err
	}
	for _, errno := range []syscall.Errno{syscall.ECONNRESET, syscall.ECONNREFUSED, syscall.ECONNABORTED, syscall.EPIPE, syscall.ETIMEDOUT} {
		if errors.Is(err, errno) {
			return true
		}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// transientNetError reports the network errors, as Chromium names them
// (net::ERR_…) or as Go's net package words them, that a second attempt
// may not meet. A name that does not resolve is not one of them: it is the
// URL's problem, and retrying only delays the failure.
func transientNetError(s string) bool {
	for _, w := range []string{
		"ERR_CONNECTION_RESET", "ERR_CONNECTION_REFUSED", "ERR_CONNECTION_CLOSED",
		"ERR_CONNECTION_ABORTED", "ERR_EMPTY_RESPONSE", "ERR_TIMED_OUT", "ERR_CONNECTION_TIMED_OUT",
		"ERR_NETWORK_CHANGED", "ERR_HTTP2_PROTOCOL_ERROR", "ERR_SOCKET_NOT_CONNECTED",
		"connection reset", "connection refused", "broken pipe", "i/o timeout", "EOF",
		"server closed idle connection",
	} {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// RetryAfter reads a Retry-After header value, delay-seconds or an HTTP
// date (RFC 9110 §10.2.3), as the wait it asks for from now. ok is false
// for an empty or unreadable value; a date in the past is a wait of 0.
func RetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n < 0 {
			return 0, false
		}
		if n > int64(365*24*time.Hour/time.Second) {
			n = int64(365 * 24 * time.Hour / time.Second)
		}
		return time.Duration(n) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}
