// Package fetch fetches web pages over plain HTTP for the `render:
// "http"` path of the extraction templates, under the same URL policy as
// the browser, and tighter:
//
//   - Every connection, redirects included, is opened by a dialer that
//     resolves the host once, checks every address of the answer against
//     the trust level (engine.CheckAddr: under restricted no address
//     netpolicy.Classify calls internal, the machine's own included) and
//     against the deny list (the daemon's own host:port, whatever the
//     trust level, and this machine's addresses when the daemon listens
//     on a wildcard address), then connects to exactly the address it
//     checked (a net.Dialer Control hook checks the socket's address once
//     more). It is the egress proxy's dialer too (engine.NewCheckedDialer).
//     A DNS answer that changes between the check and the connection
//     cannot reach a refused address.
//   - Redirects are followed here, not by net/http: each Location is
//     resolved with the URL Standard's parser (as a browser would) and
//     checked with engine.CheckURL before it is requested; at most
//     MaxRedirects hops.
//   - The body is cut at MaxBytes (Page.Truncated says so) and the whole
//     fetch, redirects and body included, ends at Timeout.
//   - Cookies: a jar per Fetcher, seeded with the cookies given (those of
//     a browser session, for runs in one) and fed by Set-Cookie.
//   - The body is decoded to UTF-8 from the charset the page declares
//     (see decodeBody).
//
// A Fetcher is made per run and reused for all its pages, so connections
// are kept alive between pages of a host. It is safe for concurrent use.
//
// Callers read fetch.New(fetch.Options{…}), *fetch.Fetcher and
// *fetch.Page; that it fetches over plain HTTP, not in a browser, is what
// its place beside package page under internal/extract says.
package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/publicsuffix"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/weburl"
	"github.com/browsertask/browsertask/internal/netpolicy"
)

// Defaults for the zero values of Options.
const (
	// DefaultMaxBytes caps a page's body (after content decoding).
	DefaultMaxBytes = 10 << 20
	// DefaultTimeout bounds one Fetch, redirects and body included (the
	// extraction templates' default perPageTimeoutMs).
	DefaultTimeout = 30 * time.Second
	// DefaultMaxRedirects is Chromium's limit.
	DefaultMaxRedirects = 20
	// DefaultUserAgent is sent when Options.UserAgent is empty. Callers
	// that compare against a browser should send the browser's.
	DefaultUserAgent = "Mozilla/5.0 (compatible; browsertask)"
	// defaultAccept is what Chromium sends for a top-level document.
	defaultAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8"
)

// Options configure a Fetcher.
type Options struct {
	// Policy is the run's URL policy: trust level, deny list (the
	// daemon's own listener), file: URLs (never fetched here). Its
	// Resolve, when set and Resolver is nil, is used for lookups.
	Policy engine.URLPolicy
	// Resolver looks up hosts for the dialer and for engine.CheckURL; nil
	// uses Policy.Resolve when set, else the system resolver.
	Resolver Resolver
	// Dial connects to an address that passed the check ("ip:port", never
	// a host name); nil uses a net.Dialer (with a Control hook that checks
	// the address once more). Tests use fixture.PublicNet.Dial to present
	// loopback fixture servers as public hosts, as with browser.Options.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// MaxBytes caps a page's body (DefaultMaxBytes when 0).
	MaxBytes int64
	// Timeout bounds one Fetch (DefaultTimeout when 0).
	Timeout time.Duration
	// MaxRedirects caps the redirects of one Fetch (DefaultMaxRedirects
	// when 0).
	MaxRedirects int
	// UserAgent is the User-Agent header (DefaultUserAgent when empty).
	UserAgent string
	// AcceptLanguage is the Accept-Language header ("en-US,en;q=0.9"
	// when empty).
	AcceptLanguage string
	// Header holds extra request headers (a run's inputs.headers), set on
	// every request after the defaults, so it may replace Accept or
	// Accept-Language; the caller has refused the names it must not set
	// (hop-by-hop, Host, Cookie…). User-Agent is UserAgent's.
	Header http.Header
	// Proxy, when set, sends every request through this proxy (http://,
	// https:// or socks5://, credentials in its user info). The checked
	// dialer connects to the proxy, so its address is held to the policy
	// like any other; each target URL is still checked by engine.CheckURL
	// (resolved here) before it is sent, redirects included. The proxy
	// resolves the target again itself: under trust restricted a proxy
	// that answers a public name with an internal address is the proxy's
	// doing, which is why its own address must pass the policy.
	Proxy *url.URL
	// Cookies seed the cookie jar, e.g. a browser session's cookies. A
	// Domain with a leading dot makes a domain cookie (sent to
	// subdomains too), one without a host-only cookie (CDP's convention);
	// Path, Secure, Expires and HttpOnly are kept.
	Cookies []*http.Cookie
}

// Page is what a Fetch got.
type Page struct {
	// URL is the final URL after redirects, as the URL Standard writes it
	// (what a browser's location.href shows).
	URL string
	// Redirects lists the URLs that answered with a redirect, in order.
	Redirects []string
	// Status and StatusText are the final response's status code and
	// reason phrase (empty over HTTP/2, as in a browser).
	Status     int
	StatusText string
	// ContentType is the media type, lower case, without parameters; when
	// the server sent none, the sniffed one.
	ContentType string
	// Header is the final response's header.
	Header http.Header
	// Body is the body decoded to UTF-8; Charset names the encoding it
	// was decoded from.
	Body    string
	Charset string
	// Truncated is true when the body was cut at MaxBytes; Bytes is how
	// many body bytes were kept.
	Truncated bool
	Bytes     int64
	// deadline ends the page's time budget (its Fetch's Timeout), which
	// the page's style sheets share (Document).
	deadline time.Time
}

// IsHTML reports whether the page is HTML (text/html or XHTML).
func (p *Page) IsHTML() bool { return isHTMLType(p.ContentType) }

// Fetcher fetches pages under one URL policy, with one cookie jar and one
// connection pool.
type Fetcher struct {
	opts   Options
	client *http.Client
	tr     *http.Transport
	jar    http.CookieJar
	dns    *engine.HostCache
	// res answers the lookups of the policy's pre-check (CheckURL).
	res Resolver
	// sheets caches the style sheets pages link to (styles.go).
	sheetsMu sync.Mutex
	sheets   map[string]*sheetEntry
}

// New returns a Fetcher. Errors: a cookie jar cannot be made (never in
// practice) or a seed cookie has no domain.
func New(o Options) (*Fetcher, error) {
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxRedirects <= 0 {
		o.MaxRedirects = DefaultMaxRedirects
	}
	if o.UserAgent == "" {
		o.UserAgent = DefaultUserAgent
	}
	if o.AcceptLanguage == "" {
		o.AcceptLanguage = "en-US,en;q=0.9"
	}
	res := o.Resolver
	if res == nil && o.Policy.Resolve != nil {
		resolve := o.Policy.Resolve
		res = ResolverFunc(func(ctx context.Context, _, host string) ([]netip.Addr, error) {
			return engine.URLPolicy{Resolve: resolve}.LookupHostContext(ctx, host)
		})
	}
	if res == nil {
		res = net.DefaultResolver
	}
	jar, err := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
	if err != nil {
		return nil, fmt.Errorf("fetch: cookie jar: %w", err)
	}
	if err := seedCookies(jar, o.Cookies); err != nil {
		return nil, err
	}
	if o.Policy.LocalAddrs == nil {
		o.Policy.LocalAddrs = netpolicy.NewOwnAddrs(ownAddrsTTL).List
	}
	d := newDialer(o.Policy, res, o.Dial)
	tr := &http.Transport{
		DialContext:         d.DialContext,
		ForceAttemptHTTP2:   true,
		MaxIdleConns:        100,
		MaxIdleConnsPerHost: 20,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
		// No proxy from the environment: the dialer must see the real
		// target of every connection, or the run's own proxy (Options.Proxy).
		Proxy: nil,
	}
	if o.Proxy != nil {
		tr.Proxy = http.ProxyURL(o.Proxy)
	}
	f := &Fetcher{opts: o, tr: tr, jar: jar, dns: engine.NewHostCache(dnsTTL), res: res, sheets: map[string]*sheetEntry{}}
	f.client = &http.Client{
		Transport: tr,
		Jar:       jar,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return f, nil
}

// seedCookies puts cookies into the jar, each under a URL of its domain.
func seedCookies(jar http.CookieJar, cookies []*http.Cookie) error {
	for i, c := range cookies {
		if c == nil {
			continue
		}
		host := strings.TrimPrefix(c.Domain, ".")
		if host == "" {
			return fmt.Errorf("fetch: Options.Cookies[%d] (%s) has no Domain; give the host it belongs to (a leading dot for a domain cookie)", i, c.Name)
		}
		cp := *c
		if !strings.HasPrefix(c.Domain, ".") {
			cp.Domain = "" // host-only
		}
		if cp.Path == "" {
			cp.Path = "/"
		}
		scheme := "http"
		if c.Secure {
			scheme = "https"
		}
		jar.SetCookies(&url.URL{Scheme: scheme, Host: host, Path: cp.Path}, []*http.Cookie{&cp})
	}
	return nil
}

// Close closes the idle connections.
func (f *Fetcher) Close() { f.tr.CloseIdleConnections() }

// Fetch GETs rawURL (an absolute http or https URL), following redirects,
// and returns the final response with its body decoded. A response with an
// error status is a Page too (Status says so); Fetch fails only when no
// final response arrived.
//
// Errors (*engine.Error unless ctx ended):
//   - TRUST_LEVEL_NOT_ALLOWED: trust restricted and the URL, a redirect or
//     a connection went to an internal address (or to a host that cannot
//     be resolved); details {"blockedUrl", "policy"};
//   - STEP_EXECUTION_FAILED: a redirect or connection went to the daemon's
//     own address or to a scheme other than http(s) (details
//     {"blockedUrl", "policy"}), too many redirects, or a network error
//     (details {"url", "netError"});
//   - INVALID_PARAMETER: rawURL itself is refused by engine.CheckURL, or
//     is not an http(s) URL (a file: URL the policy allows is for the
//     browser);
//   - NAVIGATION_TIMEOUT: Options.Timeout passed first;
//   - ctx's cause when ctx ended (the caller's cancellation).
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (*Page, error) {
	return f.fetch(ctx, rawURL, request{accept: defaultAccept, maxBytes: f.opts.MaxBytes, timeout: f.opts.Timeout})
}

// request is what differs between fetching a page and one of its style
// sheets.
type request struct {
	accept   string
	maxBytes int64
	timeout  time.Duration
	// stream, when set, reads the final response's body instead of
	// readBody (FetchStream, raw.go).
	stream func(resp *http.Response, page *Page) error
}

// fetch is Fetch with rq's Accept header, body cap and deadline.
func (f *Fetcher) fetch(ctx context.Context, rawURL string, rq request) (*Page, error) {
	pol := f.opts.Policy
	pol.Resolve = func(host string) ([]netip.Addr, error) { return f.dns.Resolve(host, f.lookup) }
	if err := engine.CheckURL(rawURL, pol); err != nil {
		return nil, err
	}
	cur, ok := weburl.Normalize(rawURL)
	if !ok {
		return nil, engine.Errorf(engine.InvalidParameter, "%q is not a valid URL; give an absolute http:// or https:// URL", short(rawURL)).
			WithDetails(map[string]any{"url": short(rawURL)})
	}
	if !strings.HasPrefix(cur, "http://") && !strings.HasPrefix(cur, "https://") {
		return nil, engine.Errorf(engine.InvalidParameter, "%q: only http:// and https:// URLs can be fetched over HTTP; open other URLs (file:) in the browser", short(rawURL)).
			WithDetails(map[string]any{"url": short(rawURL)})
	}
	fctx, cancel := context.WithTimeoutCause(ctx, rq.timeout, errFetchTimeout)
	defer cancel()
	page := &Page{deadline: time.Now().Add(rq.timeout)}
	for hop := 0; ; hop++ {
		resp, err := f.get(fctx, cur, rq.accept)
		if err != nil {
			return nil, f.mapErr(ctx, fctx, cur, err)
		}
		loc := resp.Header.Get("Location")
		if isRedirect(resp.StatusCode) && loc != "" {
			drain(resp)
			next, ok := weburl.Resolve(cur, loc)
			if !ok {
				return nil, engine.Errorf(engine.StepExecutionFailed, "%s redirected to %q, which is not a valid URL", short(cur), short(loc)).
					WithDetails(map[string]any{"url": short(cur), "netError": "net::ERR_INVALID_REDIRECT"})
			}
			page.Redirects = append(page.Redirects, cur)
			if hop+1 > f.opts.MaxRedirects {
				return nil, engine.Errorf(engine.StepExecutionFailed, "navigation to %s failed: more than %d redirects", short(rawURL), f.opts.MaxRedirects).
					WithDetails(map[string]any{"url": short(rawURL), "netError": "net::ERR_TOO_MANY_REDIRECTS"})
			}
			if err := engine.CheckURL(next, pol); err != nil {
				return nil, blocked(next, engine.AsError(err))
			}
			cur = next
			continue
		}
		if rq.stream != nil {
			err = rq.stream(resp, page)
		} else {
			err = f.readBody(fctx, resp, page, rq.maxBytes)
		}
		if err != nil {
			return nil, f.mapErr(ctx, fctx, cur, err)
		}
		page.URL = cur
		return page, nil
	}
}

// errFetchTimeout is the cause of a Fetch's own deadline.
var errFetchTimeout = errors.New("fetch: the page did not answer before the deadline")

// get sends one GET for u.
func (f *Fetcher) get(ctx context.Context, u, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("User-Agent", f.opts.UserAgent)
	req.Header.Set("Accept", accept)
	req.Header.Set("Accept-Language", f.opts.AcceptLanguage)
	for name, vs := range f.opts.Header {
		req.Header[http.CanonicalHeaderKey(name)] = vs
	}
	return f.client.Do(req)
}

// readBody reads at most maxBytes of the body and decodes it into page.
func (f *Fetcher) readBody(ctx context.Context, resp *http.Response, page *Page, maxBytes int64) error {
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBytes+1))
	if err != nil && ctx.Err() == nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if int64(len(raw)) > maxBytes {
		raw = raw[:maxBytes]
		page.Truncated = true
	}
	page.Status = resp.StatusCode
	if resp.ProtoMajor < 2 {
		page.StatusText = strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)))
	}
	page.Header = resp.Header
	ct := resp.Header.Get("Content-Type")
	page.ContentType = mediaType(ct)
	if page.ContentType == "" {
		page.ContentType = mediaType(http.DetectContentType(raw))
	}
	page.Body, page.Charset = decodeBody(raw, ct, page.IsHTML())
	page.Bytes = int64(len(raw))
	return nil
}

// isRedirect reports the statuses a browser follows with Location.
func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// drain reads a little of a redirect's body so its connection can be
// reused, then closes it.
func drain(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
	resp.Body.Close()
}

// mapErr turns a failed request for u into the documented errors.
func (f *Fetcher) mapErr(parent, fctx context.Context, u string, err error) error {
	var ref *netpolicy.RefusedError
	if errors.As(err, &ref) {
		if e := engine.AsError(ref.Err); e != nil {
			return blocked(u, e)
		}
	}
	if parent.Err() != nil {
		return context.Cause(parent)
	}
	if fctx.Err() != nil {
		return engine.Wrap(engine.NavigationTimeout, err, "%s did not answer before the deadline (%s)", short(u), f.opts.Timeout).
			WithDetails(map[string]any{"url": short(u)})
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return engine.Wrap(engine.StepExecutionFailed, err, "navigation to %s failed: %v", short(u), err).
		WithDetails(map[string]any{"url": short(u), "netError": err.Error()})
}

// blocked is the error of a URL the policy refused on the way (a redirect
// target or a connection), shaped like the browser path's refusals:
// TRUST_LEVEL_NOT_ALLOWED stays, anything else is STEP_EXECUTION_FAILED
// (the run's inputs were fine; the page went there).
func blocked(u string, e *engine.Error) *engine.Error {
	code := e.Code
	if code != engine.TrustLevelNotAllowed {
		code = engine.StepExecutionFailed
	}
	return engine.Errorf(code, "the page requested %s, which the URL policy blocks: %s", short(u), e.Message).
		WithDetails(map[string]any{"blockedUrl": short(u), "policy": policyReason(e)})
}

// policyReason names why the policy refused, for details.policy (the
// browser path's names).
func policyReason(e *engine.Error) string {
	switch {
	case e.Code == engine.TrustLevelNotAllowed && e.Details["reason"] == engine.ReasonUnresolvable:
		return "unresolvable"
	case e.Code == engine.TrustLevelNotAllowed:
		return "trust-restricted"
	case strings.Contains(e.Message, "own address") || strings.Contains(e.Message, "this server listens"):
		return "daemon-address"
	default:
		return "scheme"
	}
}

// short cuts a URL for messages.
func short(u string) string {
	if len(u) > 200 {
		return u[:200] + "…"
	}
	return u
}

// lookup resolves host with the Fetcher's resolver, within 5 s.
func (f *Fetcher) lookup(host string) ([]netip.Addr, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return f.res.LookupNetIP(ctx, "ip", host)
}

// dnsTTL is how long the engine.CheckURL lookups of a Fetcher are reused.
// Only that pre-check uses the cache; the dialer looks up afresh for every
// connection and checks what it connects to.
const dnsTTL = 30 * time.Second
