package templates

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/hostgate"
)

// politeness holds the inputs that decide how a page-visiting run treats
// the sites it visits and how it presents itself (issue 30): retries of
// transient failures, requests in flight per host, spacing, User-Agent,
// extra headers and a proxy. batch_extract_pages and crawl_site embed it;
// it applies on every render path (polite_pool.go, polite_browser.go).
type politeness struct {
	// Retries is how many times a page that failed transiently
	// (engine.Transient) is tried again (defaultRetries when absent).
	Retries *int `json:"retries"`
	// PerHostConcurrency bounds the page requests in flight per host
	// (hostgate.DefaultPerHost when 0).
	PerHostConcurrency int `json:"perHostConcurrency"`
	// MinDelayMs is the least time between two page requests to one host.
	MinDelayMs int `json:"minDelayMs"`
	// UserAgent replaces the User-Agent of the run's requests.
	UserAgent string `json:"userAgent"`
	// Headers are extra request headers, name → value or {value, secret}.
	Headers map[string]headerValue `json:"headers"`
	// Proxy sends the run's requests through a proxy.
	Proxy string `json:"proxy"`
}

// headerValue is one entry of inputs.headers: a string or {value, secret}.
type headerValue struct {
	Value  string `json:"value"`
	Secret bool   `json:"secret,omitempty"`
}

// UnmarshalJSON accepts both the short (string) and the long form.
func (h *headerValue) UnmarshalJSON(b []byte) error {
	if s := bytes.TrimSpace(b); len(s) > 0 && s[0] == '"' {
		return json.Unmarshal(s, &h.Value)
	}
	type plain headerValue
	return json.Unmarshal(b, (*plain)(h))
}

// Bounds of the politeness inputs; the schema states them from here.
const (
	defaultRetries = 2
	maxRetries     = 10
	maxMinDelayMs  = 60000
	maxHeaders     = 50
)

// politenessSchema is the schema text of the politeness inputs, spliced
// into the properties of each template that embeds politeness.
func politenessSchema() string {
	return `"retries": {"type": "integer", "minimum": 0, "maximum": ` + strconv.Itoa(maxRetries) + `, "default": ` + strconv.Itoa(defaultRetries) + `, "description": "Times a page is tried again after a transient failure: a network error (connection reset, refused, closed), a timeout, or HTTP 408, 429, 502, 503, 504. Waits grow exponentially with jitter (about 1 s, 2 s, 4 s… up to 30 s); a Retry-After header is obeyed (over HTTP) up to 60 s, and a page asked to wait longer fails saying so. Other statuses (404, 403, 500…) and URL-policy refusals are not retried. Each page says its attempts."},
    "perHostConcurrency": {"type": "integer", "minimum": 1, "maximum": ` + strconv.Itoa(hostgate.MaxPerHost) + `, "default": ` + strconv.Itoa(hostgate.DefaultPerHost) + `, "description": "Most page requests in flight to one host (host and port), whatever concurrency is: the tabs or connections beyond it work on other hosts or wait. A host that answers 429 or 503, or takes over 5 s, gets its requests spaced further apart (doubling from 0.5 s, up to 60 s), relaxed again as it answers well. Counts page loads (HTTP fetches and the browser's main document), not the images, scripts and styles a page loads."},
    "minDelayMs": {"type": "integer", "minimum": 0, "maximum": ` + strconv.Itoa(maxMinDelayMs) + `, "default": 0, "description": "Least time between the starts of two page requests to one host, in ms."},
    "userAgent": {"type": "string", "minLength": 1, "maxLength": 512, "description": "The User-Agent the run sends, on both paths (default: the server's --user-agent, else the browser's own, and browsertask's over HTTP)."},
    "headers": {"type": "object", "maxProperties": ` + strconv.Itoa(maxHeaders) + `, "description": "Extra request headers for the run's pages, on both paths (in the browser, for every request of the run's pages): name → value, or {value, secret: true} to keep the value out of everything stored and shown (an Authorization value is always kept out). Refused: hop-by-hop and connection headers (Connection, Keep-Alive, TE, Trailer, Transfer-Encoding, Upgrade, Proxy-*), Host, Content-Length, Expect, Accept-Encoding (the client's own), Cookie (cookies come from the run's session: use sessionId) and User-Agent (use userAgent).",
      "additionalProperties": {"oneOf": [{"type": "string", "maxLength": 8192},
        {"type": "object", "additionalProperties": false, "required": ["value"], "properties": {"value": {"type": "string", "maxLength": 8192}, "secret": {"type": "boolean", "default": false}}}]}},
    "proxy": {"type": "string", "minLength": 1, "maxLength": 2048, "description": "Send the run's requests through this proxy, on both paths: http://host:port, https://host:port or socks5://host:port, with user:password@ when it needs them (kept out of everything stored and shown). Under trust restricted the proxy's own address must be allowed, and every page URL is still checked before it is sent."}`
}

// retries is the number of retries the inputs ask for.
func (p *politeness) retries() int {
	if p.Retries == nil {
		return defaultRetries
	}
	return *p.Retries
}

// gate returns the run's per-host gate.
func (p *politeness) gate() *hostgate.Gate {
	return hostgate.New(hostgate.Options{PerHost: p.PerHostConcurrency, MinDelay: time.Duration(p.MinDelayMs) * time.Millisecond})
}

// refusedHeaders are the header names inputs.headers may not set, with the
// reason the error gives. Proxy-* is refused by prefix.
var refusedHeaders = map[string]string{
	"Host":              "the URL decides it",
	"Connection":        "a hop-by-hop header the client manages",
	"Keep-Alive":        "a hop-by-hop header the client manages",
	"Te":                "a hop-by-hop header the client manages",
	"Trailer":           "a hop-by-hop header the client manages",
	"Transfer-Encoding": "a hop-by-hop header the client manages",
	"Upgrade":           "a hop-by-hop header the client manages",
	"Content-Length":    "the client computes it",
	"Expect":            "the client manages it",
	"Accept-Encoding":   "the client decodes what it asks for; setting it would hand back compressed bytes",
	"Cookie":            "cookies come from the run's session; sign in with the login template and pass its sessionId",
	"User-Agent":        "use inputs.userAgent",
}

// check refuses politeness inputs a run cannot use, naming the field.
// render is the run's inputs.render: the browser path (browser, auto)
// cannot use a proxy under trust restricted (its requests go through
// browsertask's own checking proxy). Errors: INVALID_PARAMETER;
// TRUST_LEVEL_NOT_ALLOWED when the proxy's address is refused by the URL
// policy, or for a browser-path proxy under restricted.
func (p *politeness) check(pol engine.URLPolicy, render string) error {
	if strings.ContainsAny(p.UserAgent, "\r\n\x00") {
		return invalidField("inputs.userAgent", "contains a line break or NUL; give one line of text")
	}
	names := make([]string, 0, len(p.Headers))
	for n := range p.Headers {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		field := "inputs.headers." + n
		if !httpguts.ValidHeaderFieldName(n) {
			return invalidField(field, "is not a valid header name (letters, digits and !#$%&'*+-.^_`|~ only)")
		}
		canon := http.CanonicalHeaderKey(n)
		if why, bad := refusedHeaders[canon]; bad {
			return invalidField(field, "cannot be set: "+why)
		}
		if strings.HasPrefix(canon, "Proxy-") {
			return invalidField(field, "cannot be set: proxy headers belong to inputs.proxy (give user:password@ in its URL)")
		}
		if !httpguts.ValidHeaderFieldValue(p.Headers[n].Value) {
			return invalidField(field, "the value has a control character (a line break, NUL); give one line of text")
		}
	}
	if p.Proxy == "" {
		return nil
	}
	u, err := parseProxy(p.Proxy)
	if err != nil {
		return invalidField("inputs.proxy", err.Error())
	}
	if render != renderHTTP && pol.TrustLevel == "restricted" {
		return engine.Errorf(engine.TrustLevelNotAllowed, "inputs.proxy: under trust restricted the browser's requests go through browsertask's own checking proxy and cannot use another; use render \"http\", which sends through inputs.proxy and checks every page URL first").
			WithDetails(map[string]any{"field": "inputs.proxy"})
	}
	// The proxy's address is held to the policy as a page's would be.
	probe := "http://" + u.Host + "/"
	if e := engine.AsError(engine.CheckURL(probe, pol)); e != nil {
		e.Message = "inputs.proxy: the proxy's address is refused: " + e.Message
		return e.WithDetails(map[string]any{"field": "inputs.proxy"})
	}
	return nil
}

// parseProxy reads inputs.proxy. Errors: what is wrong, for the message.
func parseProxy(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("is not a URL (%v); give http://host:port, https://host:port or socks5://host:port", redactUserinfo(err.Error(), s))
	}
	switch u.Scheme {
	case "http", "https", "socks5", "socks5h":
	default:
		return nil, fmt.Errorf("scheme %q is not supported; give http://, https:// or socks5://", u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("names no host; give %s://host:port", u.Scheme)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("has a path, query or fragment; give only %s://host:port", u.Scheme)
	}
	if u.Port() == "" {
		def := map[string]string{"http": "80", "https": "443", "socks5": "1080", "socks5h": "1080"}[u.Scheme]
		u.Host = u.Host + ":" + def
	}
	return u, nil
}

// redactUserinfo keeps a proxy URL's credentials out of a parse error.
func redactUserinfo(msg, raw string) string {
	if at := strings.LastIndex(raw, "@"); at > 0 {
		return strings.ReplaceAll(msg, raw, "…@"+raw[at+1:])
	}
	return msg
}

// secretValues are the values of p the engine keeps out of everything
// stored and shown: the proxy's credentials (the user info as written and
// the password), header values marked secret, and any Authorization value.
func (p *politeness) secretValues() []string {
	var out []string
	if u, err := url.Parse(p.Proxy); err == nil && u.User != nil {
		out = append(out, u.User.String())
		if pw, ok := u.User.Password(); ok {
			out = append(out, pw)
		} else {
			out = append(out, u.User.Username())
		}
	}
	for n, v := range p.Headers {
		if v.Secret || http.CanonicalHeaderKey(n) == "Authorization" {
			out = append(out, v.Value)
		}
	}
	return out
}

// header returns inputs.headers as an http.Header (nil when empty).
func (p *politeness) header() http.Header {
	if len(p.Headers) == 0 {
		return nil
	}
	h := http.Header{}
	for n, v := range p.Headers {
		h.Set(n, v.Value)
	}
	return h
}

// invalidField is INVALID_PARAMETER for field, with field in details.
func invalidField(field, msg string) *engine.Error {
	return engine.Errorf(engine.InvalidParameter, "%s %s", field, msg).WithDetails(map[string]any{"field": field})
}

// wire is how a run presents itself on the network, on both paths: its
// User-Agent (inputs.userAgent, else the server's --user-agent; empty:
// the client's own), extra headers and proxy.
type wire struct {
	userAgent string
	header    http.Header
	proxy     *url.URL
}

// wire returns the run's identity; serverUA is the server's --user-agent.
// Errors: INVALID_PARAMETER for a proxy that Check would have refused.
func (p *politeness) wire(serverUA string) (wire, error) {
	w := wire{userAgent: p.UserAgent, header: p.header()}
	if w.userAgent == "" {
		w.userAgent = serverUA
	}
	if p.Proxy != "" {
		u, err := parseProxy(p.Proxy)
		if err != nil {
			return w, invalidField("inputs.proxy", err.Error())
		}
		w.proxy = u
	}
	return w, nil
}

// tabSetup returns next (a pool's tab setup, may be nil) followed by the
// run's identity on the tab: its User-Agent and extra headers
// (browser.Tab.SetIdentity).
func (w wire) tabSetup(next func(ctx context.Context, tb *browser.Tab) error) func(ctx context.Context, tb *browser.Tab) error {
	if w.userAgent == "" && len(w.header) == 0 {
		return next
	}
	headers := make(map[string]string, len(w.header))
	for n := range w.header {
		headers[n] = w.header.Get(n)
	}
	return func(ctx context.Context, tb *browser.Tab) error {
		if next != nil {
			if err := next(ctx, tb); err != nil {
				return err
			}
		}
		return tb.SetIdentity(ctx, w.userAgent, headers)
	}
}

// openRunSession opens the run's browser session (openSession); with a
// proxy, in a browser context of its own that sends everything through
// it (and answers its authentication with the URL's credentials). Errors:
// as openSession; INVALID_PARAMETER for a proxy in a named session (its
// context was made without it); TRUST_LEVEL_NOT_ALLOWED for a proxy under
// trust restricted.
func openRunSession(ctx context.Context, b *browser.Manager, env engine.Env, template string, w wire) (*browser.Session, error) {
	if w.proxy == nil || b == nil {
		return openSession(ctx, b, env, template)
	}
	if b.Named(env.SessionID()) {
		return nil, invalidField("inputs.proxy", "cannot be used in a named session (sessionId): the session's browser was set up without it; leave sessionId out, or the proxy")
	}
	if env.Profile().TrustLevel == "restricted" {
		return nil, engine.Errorf(engine.TrustLevelNotAllowed, "inputs.proxy: under trust restricted the browser's requests go through browsertask's own checking proxy and cannot use another; use render \"http\"").
			WithDetails(map[string]any{"field": "inputs.proxy"})
	}
	s, err := b.SessionWithProxy(ctx, env.SessionID(), w.proxy.String())
	if err != nil && ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	return s, err
}
