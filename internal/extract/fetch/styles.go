package fetch

import (
	"context"
	"net/url"
	"strings"
	"time"

	"github.com/browsertask/browsertask/internal/extract/page"
)

// A page's style sheets decide what its text shows (package page,
// css.go), so the HTTP path reads them as a browser would, within
// bounds:
//
//   - only sheets of the page's own origin (scheme, host and port of its
//     final URL) are fetched; a browser applies other origins' sheets
//     too, and their rules are then missing here (the page's
//     Document.StyleReport names them). A sheet that redirects elsewhere
//     is followed under the URL policy, as the page is;
//   - every request goes through the same dialer and URL policy as the
//     page (Fetch), with Accept text/css;
//   - a sheet is cut at page.MaxStyleSheetBytes, a page reads at most
//     page.MaxStyleSheets of them, and they share the page's deadline
//     (the Fetch's Timeout from its start); a sheet answered with an
//     error status, a type other than text/css, or not in time gives no
//     rule, and the page is read all the same;
//   - sheets are cached per Fetcher (per run) by URL, at most
//     maxCachedSheets of them, as a browser's cache would keep them: the
//     pages of a site share theirs, fetched and parsed once.
const maxCachedSheets = 256

// sheetEntry is one cached sheet: done closes when sheet is known (nil
// when it gives no rule).
type sheetEntry struct {
	done  chan struct{}
	sheet *page.StyleSheet
	keep  bool // cached: a definite answer, not a network error
}

// Document parses a fetched HTML page and loads its same-origin style
// sheets (see above), ready for extraction. The error is page.Parse's (a
// *page.DepthError for markup nested too deep).
func (f *Fetcher) Document(ctx context.Context, pg *Page) (*page.Document, error) {
	d, err := page.ParseString(pg.Body, pg.URL)
	if err != nil {
		return nil, err
	}
	deadline := pg.deadline
	if deadline.IsZero() {
		deadline = time.Now().Add(f.opts.Timeout)
	}
	sctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	origin := originOf(pg.URL)
	d.LoadStyleSheets(func(u string) *page.StyleSheet {
		if origin == "" || originOf(u) != origin {
			return nil
		}
		return f.sheet(sctx, u)
	})
	d.StyleReport() // compute the cascade now, while the loader's context lives
	return d, nil
}

// sheet returns the parsed sheet at u, from the cache or fetched.
func (f *Fetcher) sheet(ctx context.Context, u string) *page.StyleSheet {
	f.sheetsMu.Lock()
	e, ok := f.sheets[u]
	if !ok {
		e = &sheetEntry{done: make(chan struct{})}
		if len(f.sheets) < maxCachedSheets {
			f.sheets[u] = e
		}
	}
	f.sheetsMu.Unlock()
	if ok {
		select {
		case <-e.done:
			return e.sheet
		case <-ctx.Done():
			return nil
		}
	}
	e.sheet, e.keep = f.loadSheet(ctx, u)
	close(e.done)
	if !e.keep {
		f.sheetsMu.Lock()
		if f.sheets[u] == e {
			delete(f.sheets, u)
		}
		f.sheetsMu.Unlock()
	}
	return e.sheet
}

// loadSheet fetches and parses one sheet; keep is false when the answer
// was no answer (a network error, the deadline), worth asking again for
// another page.
func (f *Fetcher) loadSheet(ctx context.Context, u string) (sheet *page.StyleSheet, keep bool) {
	left := time.Until(deadlineOf(ctx, f.opts.Timeout))
	if left <= 0 {
		return nil, false
	}
	pg, err := f.fetch(ctx, u, request{accept: "text/css,*/*;q=0.1", maxBytes: page.MaxStyleSheetBytes, timeout: left})
	if err != nil {
		return nil, false
	}
	if pg.Status >= 400 || (pg.ContentType != "text/css" && pg.Header.Get("Content-Type") != "") {
		return nil, true
	}
	s := page.ParseStyleSheet(pg.Body, pg.URL)
	if pg.Truncated {
		s.Cut = true
	}
	return s, true
}

// deadlineOf is ctx's deadline, or now + d without one.
func deadlineOf(ctx context.Context, d time.Duration) time.Time {
	if t, ok := ctx.Deadline(); ok {
		return t
	}
	return time.Now().Add(d)
}

// originOf is a URL's origin as scheme://host:port ("" when it has
// none).
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return u.Scheme + "://" + strings.ToLower(u.Hostname()) + ":" + port
}
