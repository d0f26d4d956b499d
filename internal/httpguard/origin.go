package httpguard

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Origin is a browser origin: scheme, host and port, nothing else (RFC
// 6454). It is comparable, so two spellings of one origin ("HTTP://LocalHost:80"
// and "http://localhost") are equal Origins.
type Origin struct {
	// Scheme is "http" or "https".
	Scheme string
	// Host is the host name in lower case, or an IP address (IPv6
	// without brackets).
	Host string
	// Port is always set: the scheme's default (80, 443) when the text
	// left it out.
	Port string
}

// String serialises o as a browser does: the default port left out, an
// IPv6 address in brackets.
func (o Origin) String() string {
	host := o.Host
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if o.Port != defaultPort(o.Scheme) {
		host += ":" + o.Port
	}
	return o.Scheme + "://" + host
}

// ParseOrigin parses an Origin header value or an --allowed-origins entry:
// exactly scheme://host[:port] with scheme http or https, as browsers send
// it. Everything else is an error saying what is wrong: "null" (an opaque
// origin, which names nobody), user info, a path (a trailing "/" too), a
// query or fragment, an empty or out-of-range port, another scheme. Being
// strict costs nothing, since browsers never send those forms; only a
// forged or mistyped value has them.
func ParseOrigin(raw string) (Origin, error) {
	if raw == "null" {
		return Origin{}, errors.New(`"null" is an opaque origin (a sandboxed page, a file, a redirect) and names no site`)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Origin{}, fmt.Errorf("%q is not an origin: want scheme://host[:port], e.g. http://localhost:3000", raw)
	}
	switch {
	case u.User != nil:
		return Origin{}, fmt.Errorf("%q has user info; an origin is scheme://host[:port] only", raw)
	case u.Path != "" || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(raw, "#"):
		return Origin{}, fmt.Errorf("%q has a path, query or fragment; an origin is scheme://host[:port] only (no trailing /)", raw)
	}
	return originOf(u, raw)
}

// URLOrigin returns the origin of an absolute http(s) URL, such as a
// Referer: its path, query and fragment are dropped, user info refused.
func URLOrigin(raw string) (Origin, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Origin{}, fmt.Errorf("%q is not a URL", raw)
	}
	if u.User != nil {
		return Origin{}, fmt.Errorf("%q has user info", raw)
	}
	return originOf(u, raw)
}

// originOf checks scheme, host and port of u, parsed from raw.
func originOf(u *url.URL, raw string) (Origin, error) {
	if u.Scheme != "http" && u.Scheme != "https" {
		return Origin{}, fmt.Errorf("%q: the scheme must be http or https, e.g. http://localhost:3000", raw)
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return Origin{}, fmt.Errorf("%q has no host: want scheme://host[:port], e.g. http://localhost:3000", raw)
	}
	port := u.Port()
	switch {
	case port == "" && strings.HasSuffix(u.Host, ":"):
		return Origin{}, fmt.Errorf("%q has an empty port: give the port after ':' or leave both out", raw)
	case port == "":
		port = defaultPort(u.Scheme)
	default:
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return Origin{}, fmt.Errorf("%q: the port must be 1..65535", raw)
		}
		port = strconv.Itoa(n)
	}
	return Origin{Scheme: u.Scheme, Host: strings.ToLower(u.Hostname()), Port: port}, nil
}

// defaultPort is the port a scheme's URLs use when they name none.
func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// RequestOrigin is the origin r was sent to: the scheme of its connection
// (https only under TLS) and the host and port of its Host header, the
// authority the browser put in the URL. A page this server sent has this
// origin.
func RequestOrigin(r *http.Request) Origin {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	host, port, err := net.SplitHostPort(r.Host)
	if err != nil {
		host, port = strings.TrimSuffix(strings.TrimPrefix(r.Host, "["), "]"), defaultPort(scheme)
	}
	if n, err := strconv.Atoi(port); err == nil {
		port = strconv.Itoa(n)
	}
	return Origin{Scheme: scheme, Host: strings.ToLower(host), Port: port}
}

// OriginRule is the one answer to "may a page on this origin use this
// server", shared by /mcp and the dashboard so that both accept exactly
// the same Origins. A request's own origin (RequestOrigin: the Origin
// equals the scheme, host and port the request was sent to, letter case
// and default ports aside) and the configured extra origins
// (--allowed-origins) are accepted; anything else is refused, the
// daemon's other loopback names included (a page on http://localhost:PORT
// posting to 127.0.0.1:PORT is another origin to a browser, and no page
// the daemon serves does that), and so is an https Origin on a plain
// http connection (a TLS proxy in front lists its origin in
// --allowed-origins). The Host header itself is HostAllowed's to judge.
type OriginRule struct {
	extra map[Origin]bool
}

// NewOriginRule builds the rule with the extra origins allowed besides a
// request's own. Entries that are not origins are left out and reported
// together in the error, each with its reason; the rule returned is
// usable either way (the command line refuses such entries before a
// server is built, see ParseOrigin).
func NewOriginRule(extra []string) (*OriginRule, error) {
	g := &OriginRule{extra: map[Origin]bool{}}
	var errs []error
	for _, raw := range extra {
		o, err := ParseOrigin(raw)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		g.extra[o] = true
	}
	return g, errors.Join(errs...)
}

// Allows reports whether a browser page on origin (an Origin header value,
// present and non-empty) may send r.
func (g *OriginRule) Allows(r *http.Request, origin string) bool {
	o, err := ParseOrigin(origin)
	return err == nil && g.allows(r, o)
}

// AllowsURL reports whether a page at raw (a Referer) may send r: its
// origin is judged as an Origin header would be.
func (g *OriginRule) AllowsURL(r *http.Request, raw string) bool {
	o, err := URLOrigin(raw)
	return err == nil && g.allows(r, o)
}

// Listed reports whether origin (an Origin header value) is one of the
// extra origins, the only ones allowed to be another site than the
// request's (the dashboard reads Sec-Fetch-Site: cross-site from them).
func (g *OriginRule) Listed(origin string) bool {
	o, err := ParseOrigin(origin)
	return err == nil && g.extra[o]
}

// allows is the rule on a parsed origin.
func (g *OriginRule) allows(r *http.Request, o Origin) bool {
	return o == RequestOrigin(r) || g.extra[o]
}
