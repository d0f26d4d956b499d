package fetch

import "context"

// FetchRaw GETs rawURL as Fetch does (URL policy, checked dialer,
// redirects, cookie jar, Timeout) but keeps the body's bytes as they came
// in Page.Raw, undecoded and cut at maxBytes (Page.Truncated says so):
// for files that are not pages, such as robots.txt and sitemaps (which
// may be gzip files; a Content-Encoding: gzip is undone by the transport,
// and maxBytes then counts the inflated bytes). accept is the Accept
// header. Errors: as Fetch.
func (f *Fetcher) FetchRaw(ctx context.Context, rawURL, accept string, maxBytes int64) (*Page, error) {
	if maxBytes <= 0 {
		maxBytes = f.opts.MaxBytes
	}
	return f.fetch(ctx, rawURL, request{accept: accept, maxBytes: maxBytes, timeout: f.opts.Timeout, raw: true})
}
