package sitemap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
)

// Limits bound what Discover reads. The zero value of a field takes its
// default (DefaultLimits).
type Limits struct {
	// MaxBytes caps one file after inflating (the sitemaps.org limit,
	// 50 MiB).
	MaxBytes int64
	// MaxURLsPerFile caps the entries of one file (sitemaps.org: 50 000).
	MaxURLsPerFile int
	// MaxURLs caps the URLs kept in all (the crawl's maxPages, say).
	MaxURLs int
	// MaxFiles caps the sitemap files fetched.
	MaxFiles int
	// MaxDepth caps index nesting: a sitemap named by an index named by
	// the root is depth 2.
	MaxDepth int
}

// DefaultLimits are the limits Discover applies to fields left zero.
var DefaultLimits = Limits{MaxBytes: 50 << 20, MaxURLsPerFile: 50000, MaxURLs: 100000, MaxFiles: 100, MaxDepth: 4}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.MaxBytes > 0 {
		d.MaxBytes = l.MaxBytes
	}
	if l.MaxURLsPerFile > 0 {
		d.MaxURLsPerFile = l.MaxURLsPerFile
	}
	if l.MaxURLs > 0 {
		d.MaxURLs = l.MaxURLs
	}
	if l.MaxFiles > 0 {
		d.MaxFiles = l.MaxFiles
	}
	if l.MaxDepth > 0 {
		d.MaxDepth = l.MaxDepth
	}
	return d
}

// Source fetches sitemap files for Discover: through the run's HTTP path
// (URL policy, checked dialer, cookies). Sitemap hands read the final
// response's status and its body as it arrives (gzip or not), at least
// maxBytes+1 bytes of it when there are, and returns read's error, or
// its own when no response came. read may stop early: a sitemap past a
// bound is not downloaded further.
type Source interface {
	Sitemap(ctx context.Context, url string, maxBytes int64, read func(status int, body io.Reader) error) error
}

// Result is what Discover found.
type Result struct {
	// Entries are the URLs kept (keep accepted them), each once, in the
	// order read: root by root, each index's children in order.
	Entries []Entry `json:"-"`
	// Files counts the sitemap files fetched; Listed the http(s) URLs the
	// url sets listed (kept or not).
	Files  int `json:"files"`
	Listed int `json:"listed"`
	// Warnings say which files could not be read or were cut, and why.
	Warnings []string `json:"warnings,omitempty"`
}

// Root is a sitemap to start from; Guessed marks one nobody named (the
// site's /sitemap.xml), whose absence is no warning.
type Root struct {
	URL     string
	Guessed bool
}

// Discover reads the sitemaps of roots and the indexes they lead to,
// breadth first, and returns the URLs keep accepts (keep sees each
// http(s) URL once; nil keeps all). A file that fails (network, status
// other than 200, malformed, past a limit) adds a warning and the rest
// goes on; only ctx ending stops Discover early (its cause returned with
// what was read).
func Discover(ctx context.Context, src Source, roots []Root, lim Limits, keep func(string) bool) (*Result, error) {
	lim = lim.withDefaults()
	res := &Result{}
	type job struct {
		url     string
		depth   int
		guessed bool
	}
	var queue []job
	seenFile := map[string]bool{}
	for _, r := range roots {
		if !seenFile[r.URL] {
			seenFile[r.URL] = true
			queue = append(queue, job{r.URL, 1, r.Guessed})
		}
	}
	seenURL := map[string]bool{}
	full := false
	for len(queue) > 0 && !full {
		j := queue[0]
		queue = queue[1:]
		if res.Files >= lim.MaxFiles {
			res.warn("%d sitemap files read, the limit: %s and %d more not read", lim.MaxFiles, j.url, len(queue))
			break
		}
		res.Files++
		status := 0
		var children []string
		emit := func(kind Kind, e Entry) error {
			if kind == KindIndex {
				children = append(children, e.URL)
				return nil
			}
			res.Listed++
			if seenURL[e.URL] {
				return nil
			}
			seenURL[e.URL] = true
			if keep != nil && !keep(e.URL) {
				return nil
			}
			if len(res.Entries) >= lim.MaxURLs {
				full = true
				return errFull
			}
			res.Entries = append(res.Entries, e)
			return nil
		}
		err := src.Sitemap(ctx, j.url, lim.MaxBytes, func(st int, body io.Reader) error {
			if status = st; st != 200 {
				return nil
			}
			_, err := Parse(body, lim.MaxBytes, lim.MaxURLsPerFile, emit)
			return err
		})
		if ctx.Err() != nil {
			return res, context.Cause(ctx)
		}
		if status == 0 && err != nil {
			res.warn("%s: %v", j.url, err)
			continue
		}
		if status != 200 {
			if !(j.guessed && status == 404) {
				res.warn("%s: HTTP status %d", j.url, status)
			}
			continue
		}
		switch {
		case errors.Is(err, errFull):
			res.warn("%d URLs kept, the limit: the rest of %s and the sitemaps after it not read", lim.MaxURLs, j.url)
		case errors.Is(err, ErrTooManyURLs):
			res.warn("%s lists more than %d URLs (the sitemaps.org limit): the rest ignored", j.url, lim.MaxURLsPerFile)
		case errors.Is(err, ErrTooLarge):
			res.warn("%s is larger than %d bytes (uncompressed): the rest ignored", j.url, lim.MaxBytes)
		case err != nil:
			res.warn("%s: %v", j.url, err)
		}
		for _, c := range children {
			c = resolve(j.url, c)
			switch {
			case c == "" || seenFile[c]:
				if c != "" {
					res.warn("%s names %s again (a loop or a repeat): read once", j.url, c)
				}
			case j.depth >= lim.MaxDepth:
				res.warn("%s: sitemap indexes nested deeper than %d: %s not read", j.url, lim.MaxDepth, c)
			default:
				seenFile[c] = true
				queue = append(queue, job{c, j.depth + 1, false})
			}
		}
	}
	return res, nil
}

var errFull = errors.New("sitemap: full")

// warn adds a warning; at most 50 are kept.
func (r *Result) warn(format string, args ...any) {
	if len(r.Warnings) < 50 {
		r.Warnings = append(r.Warnings, fmt.Sprintf(format, args...))
	}
}

// resolve returns ref against base as an absolute URL, or "".
func resolve(base, ref string) string {
	b, err := url.Parse(base)
	if err != nil {
		return ""
	}
	u, err := b.Parse(ref)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	return u.String()
}
