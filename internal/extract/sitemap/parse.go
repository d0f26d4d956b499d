// Package sitemap reads a site's sitemaps (sitemaps.org): XML url sets,
// sitemap indexes (nested), text sitemaps (one URL per line), gzip files,
// and the Sitemap: lines of robots.txt, for crawl_site's and map_site's
// frontier. Everything a sitemap may hold is bounded (Limits): bytes per
// file after inflating, URLs per file and in total, files per run, index
// depth; an index that names itself or an ancestor is read once. A
// sitemap past a bound ends cleanly with what was read before it and a
// warning saying which bound, so a hostile sitemap (a billion URLs, a
// loop of indexes, a zip bomb) costs at most the bounds.
package sitemap

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Entry is one URL a sitemap lists, with its lastmod as written there
// (W3C datetime; "" when absent).
type Entry struct {
	URL     string `json:"url"`
	Lastmod string `json:"lastmod,omitempty"`
}

// Kind says what a parsed file was.
type Kind string

// The kinds of sitemap files.
const (
	KindURLSet Kind = "urlset"
	KindIndex  Kind = "sitemapindex"
	KindText   Kind = "text"
)

// ErrTooManyURLs ends Parse when a file lists more than its maxURLs.
var ErrTooManyURLs = errors.New("sitemap: too many URLs")

// ErrTooLarge ends Parse when a file inflates past its byte cap.
var ErrTooLarge = errors.New("sitemap: too large")

// maxLocBytes bounds one <loc> or <lastmod>: the sitemaps.org limit on a
// URL is 2048 characters; longer values are dropped, not kept.
const maxLocBytes = 8192

// Parse reads one sitemap file from r: XML (a urlset or a sitemapindex),
// or text, gzip-compressed or not (by its magic bytes). emit gets each
// entry in file order with the file's kind (in an index, each child
// sitemap's URL with its lastmod); a non-nil error from emit ends Parse with it. At most maxBytes
// are read after inflating (ErrTooLarge past them) and at most maxURLs
// entries emitted (ErrTooManyURLs at the next one). Entries whose URL is
// not http(s) are skipped. Errors: those, a malformed gzip or XML file
// (with what was emitted before it kept by the caller), emit's.
func Parse(r io.Reader, maxBytes int64, maxURLs int, emit func(Kind, Entry) error) (Kind, error) {
	br := bufio.NewReader(r)
	if head, _ := br.Peek(2); len(head) == 2 && head[0] == 0x1f && head[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return "", fmt.Errorf("sitemap: gzip: %w", err)
		}
		defer zr.Close()
		br = bufio.NewReader(zr)
	}
	lr := &capReader{r: br, left: maxBytes}
	in := bufio.NewReader(lr)
	n := 0
	count := func(k Kind, e Entry) error {
		if n >= maxURLs {
			return ErrTooManyURLs
		}
		n++
		return emit(k, e)
	}
	first, err := firstByte(in)
	if err != nil {
		return "", lr.cause(err)
	}
	if first != '<' {
		return KindText, lr.cause(parseText(in, count))
	}
	kind, err := parseXML(in, count)
	return kind, lr.cause(err)
}

// firstByte returns the first byte that is not white space or a UTF-8
// byte order mark, leaving it unread.
func firstByte(in *bufio.Reader) (byte, error) {
	for {
		b, err := in.ReadByte()
		if err != nil {
			return 0, err
		}
		if b == ' ' || b == '\t' || b == '\r' || b == '\n' || b == 0xef || b == 0xbb || b == 0xbf {
			continue
		}
		return b, in.UnreadByte()
	}
}

// parseText reads a text sitemap: one URL per line, blank lines and
// anything not http(s) skipped.
func parseText(in *bufio.Reader, emit func(Kind, Entry) error) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 4096), maxLocBytes)
	for sc.Scan() {
		if u := strings.TrimSpace(sc.Text()); isHTTP(u) {
			if err := emit(KindText, Entry{URL: u}); err != nil {
				return err
			}
		}
	}
	if errors.Is(sc.Err(), bufio.ErrTooLong) {
		return fmt.Errorf("sitemap: a line longer than %d bytes: not a text sitemap", maxLocBytes)
	}
	return sc.Err()
}

// parseXML streams a urlset or sitemapindex: each <url> or <sitemap>
// element's <loc> and <lastmod>, by local name (any namespace).
func parseXML(in io.Reader, emit func(Kind, Entry) error) (Kind, error) {
	d := xml.NewDecoder(in)
	d.Strict = false
	d.CharsetReader = func(label string, r io.Reader) (io.Reader, error) {
		if l := strings.ToLower(label); l == "utf-8" || l == "utf8" || l == "us-ascii" || l == "ascii" {
			return r, nil
		}
		return nil, fmt.Errorf("sitemap: encoding %q: sitemaps are UTF-8", label)
	}
	var kind Kind
	var cur *Entry
	field := ""
	var text bytes.Buffer
	for {
		tok, err := d.Token()
		if err == io.EOF {
			if kind == "" {
				return "", errors.New("sitemap: no <urlset> or <sitemapindex> element")
			}
			return kind, nil
		}
		if err != nil {
			return kind, fmt.Errorf("sitemap: XML: %w", err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			name := strings.ToLower(t.Name.Local)
			switch {
			case kind == "" && (name == "urlset" || name == "sitemapindex"):
				kind = Kind(name)
			case (name == "url" && kind == KindURLSet) || (name == "sitemap" && kind == KindIndex):
				cur = &Entry{}
			case cur != nil && (name == "loc" || name == "lastmod"):
				field = name
				text.Reset()
			}
		case xml.CharData:
			if field != "" && text.Len()+len(t) <= maxLocBytes {
				text.Write(t)
			}
		case xml.EndElement:
			name := strings.ToLower(t.Name.Local)
			switch {
			case cur != nil && field != "" && name == field:
				v := strings.TrimSpace(text.String())
				if field == "loc" {
					cur.URL = v
				} else if len(v) <= 64 {
					cur.Lastmod = v
				}
				field = ""
			case cur != nil && (name == "url" || name == "sitemap"):
				e := *cur
				cur, field = nil, ""
				if isHTTP(e.URL) {
					if err := emit(kind, e); err != nil {
						return kind, err
					}
				}
			}
		}
	}
}

// isHTTP reports whether u starts like an absolute http(s) URL.
func isHTTP(u string) bool {
	l := strings.ToLower(u)
	return (strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")) && len(u) <= 2048
}

// capReader reads at most left bytes, then fails with ErrTooLarge.
type capReader struct {
	r    io.Reader
	left int64
	hit  bool
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// One byte more tells a file of exactly the cap from a larger one.
		var b [1]byte
		if n, _ := c.r.Read(b[:]); n > 0 {
			c.hit = true
			return 0, ErrTooLarge
		}
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// cause is err, or ErrTooLarge when the cap cut the file (the XML or
// gzip reader may report the cut as its own error).
func (c *capReader) cause(err error) error {
	if c.hit && err != nil && !errors.Is(err, ErrTooManyURLs) {
		return ErrTooLarge
	}
	if err == io.EOF {
		return nil
	}
	return err
}
