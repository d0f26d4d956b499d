package fetch

import (
	"context"
	"io"
	"net/http"
)

// FetchStream GETs rawURL as Fetch does (URL policy, checked dialer,
// redirects, cookie jar, Timeout) and hands the final response's status
// and body to read as they come, undecoded, at most maxBytes+1 bytes of
// it: for files that are not pages, such as sitemaps (gzip or not; a
// Content-Encoding: gzip is undone by the transport, and the bytes then
// count inflated) that a caller parses while they arrive and may stop
// reading early. read's error is returned as it is; the others are
// Fetch's.
func (f *Fetcher) FetchStream(ctx context.Context, rawURL, accept string, maxBytes int64, read func(status int, body io.Reader) error) error {
	var readErr error
	_, err := f.fetch(ctx, rawURL, request{accept: accept, maxBytes: maxBytes, timeout: f.opts.Timeout,
		stream: func(resp *http.Response, page *Page) error {
			defer resp.Body.Close()
			page.Status, page.Header = resp.StatusCode, resp.Header
			readErr = read(resp.StatusCode, io.LimitReader(resp.Body, maxBytes+1))
			return nil
		}})
	if err != nil {
		return err
	}
	return readErr
}

// FetchRaw is FetchStream reading the whole body, cut at maxBytes: the
// status and the bytes as they came, and whether the body was longer.
// Errors: as Fetch.
func (f *Fetcher) FetchRaw(ctx context.Context, rawURL, accept string, maxBytes int64) (status int, body []byte, truncated bool, err error) {
	err = f.FetchStream(ctx, rawURL, accept, maxBytes, func(st int, r io.Reader) error {
		status = st
		var rerr error
		body, rerr = io.ReadAll(r)
		return rerr
	})
	if int64(len(body)) > maxBytes {
		body, truncated = body[:maxBytes], true
	}
	return status, body, truncated, err
}
