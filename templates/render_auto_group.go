package templates

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"strings"

	"github.com/browsertask/browsertask/engine"
)

// The sections of a site render "auto" decides on (groups). A group is
// scheme, host and port plus the first directory of the path: every
// /library/… page of a host is one group, every page directly under / is
// another ("/search.html" and "/index.html" are the root group, not
// "/library/"). One directory level rather than the full directory: the
// sections of documentation (python3-doc's library/, c-api/, howto/…),
// shops (/product/, /category/) and blogs (/2024/, /posts/) are their
// first segment, while deeper directories would split a section into
// groups too small to sample economically.

// groupKey is the group a URL belongs to: its hostKey followed by "/" and
// the path's first segment and "/" when that segment is a directory
// ("/library/json.html" → "/library/"), else "/" ("/search.html",
// "/"). "" when url is not an absolute http(s) URL.
func groupKey(raw string) string {
	h := hostKey(raw)
	if h == "" {
		return ""
	}
	u, _ := url.Parse(raw) // hostKey parsed it
	return h + groupPrefix(u.EscapedPath())
}

// groupPrefix is the group's part of a URL path: "/first/" or "/".
func groupPrefix(path string) string {
	rest := strings.TrimPrefix(path, "/")
	if i := strings.IndexByte(rest, '/'); i > 0 {
		return "/" + rest[:i+1]
	}
	return "/"
}

// hostKey is the host a URL belongs to for render "auto": scheme, host
// and port (the scheme's default when none is written); "" when url is
// not an absolute http(s) URL.
func hostKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	switch {
	case scheme != "http" && scheme != "https":
		return ""
	case port == "" && scheme == "http":
		port = "80"
	case port == "":
		port = "443"
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// autoGroup is what render "auto" learned about one group of pages.
type autoGroup struct {
	// host is the group's hostKey, prefix its path prefix ("/library/").
	host, prefix string
	// browser is the reason the group's pages go to the browser; "" while
	// HTTP serves them.
	browser string
	// matched counts the samples that showed nothing only JavaScript
	// explains; inflight the samples being rendered; later the pages
	// served after the first ones (every autoSampleEvery-th is sampled
	// until autoEnoughSamples matched).
	matched, inflight, later int
	// changed is closed (and replaced) whenever the above change.
	changed chan struct{}
}

// group returns the state of the group with key k (a groupKey).
func (a *autoRender) group(k string) *autoGroup {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.groupLocked(k)
}

func (a *autoRender) groupLocked(k string) *autoGroup {
	g := a.groups[k]
	if g == nil {
		h := hostKey(k)
		g = &autoGroup{host: h, prefix: strings.TrimPrefix(k, h), changed: make(chan struct{})}
		a.groups[k] = g
	}
	return g
}

// notifyLocked wakes the pages waiting on g.
func (g *autoGroup) notifyLocked() {
	close(g.changed)
	g.changed = make(chan struct{})
}

// firstLocked is how many matching samples group g needs before its
// other pages are served over HTTP: a.first, or 1 when other groups of
// its host already matched a.first samples between them (the same
// server and, most likely, the same generator: one sample of the new
// section is the evidence left to gather).
func (a *autoRender) firstLocked(g *autoGroup) int {
	if a.hostMatched[g.host]-g.matched >= a.first {
		return min(1, a.first)
	}
	return a.first
}

// restore rebuilds the group decisions from an earlier attempt's
// checkpointed pages (their renderedBy and renderReason).
func (a *autoRender) restore(done map[string]engine.Item) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for key, it := range done {
		var p struct {
			RenderedBy   string `json:"renderedBy"`
			RenderReason string `json:"renderReason"`
		}
		if json.Unmarshal(it.Output, &p) != nil {
			continue
		}
		k := groupKey(key)
		if k == "" {
			continue
		}
		g := a.groupLocked(k)
		switch {
		case p.RenderedBy == renderBrowser && switchesGroup(p.RenderReason):
			if g.browser == "" {
				g.browser = p.RenderReason
			}
		case p.RenderedBy == renderBrowser && agreed(p.RenderReason):
			g.matched++
			a.hostMatched[g.host]++
		case p.RenderedBy == renderHTTP:
			g.later++
		}
	}
}

// switchedReason returns the reason g's pages go to the browser ("" =
// they do not).
func (a *autoRender) switchedReason(g *autoGroup) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return g.browser
}

// plan decides whether a page of g that HTTP read cleanly is rendered in
// the browser too: sample is true for a group's first pages (until
// firstLocked of them matched), for every a.every-th later one while
// fewer than a.enough samples matched, and with forced (the page's own
// HTML asks for it: an app shell, no requested field); reason is set when
// the group was switched to the browser. A page arriving while the
// group's first samples are still being rendered waits for their verdict.
func (a *autoRender) plan(ctx context.Context, g *autoGroup, forced bool) (sample bool, reason string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for {
		first := a.firstLocked(g)
		switch {
		case g.browser != "":
			return false, g.browser
		case forced || g.matched+g.inflight < first:
			g.inflight++
			return true, ""
		case g.matched >= first:
			g.later++
			if a.every > 0 && g.later%a.every == 0 && g.matched+g.inflight < a.enough {
				g.inflight++
				return true, ""
			}
			return false, ""
		}
		ch := g.changed
		a.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
		}
		a.mu.Lock()
		if ctx.Err() != nil {
			return false, ""
		}
	}
}

// resolve records a sample's verdict: matched, a reason to switch the
// group (switchTo), or neither (no verdict). It returns switchTo.
func (a *autoRender) resolve(g *autoGroup, matched bool, switchTo string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	g.inflight--
	switch {
	case switchTo != "":
		if g.browser == "" {
			g.browser = switchTo
		}
	case matched:
		g.matched++
		a.hostMatched[g.host]++
	}
	g.notifyLocked()
	return switchTo
}
