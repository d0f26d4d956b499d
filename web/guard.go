package web

import (
	"net/http"
	"strings"

	"github.com/browsertask/browsertask/internal/httpguard"
)

// tokenCookie holds the dashboard token after a /login?token= visit.
const tokenCookie = "browsertask_token"

// maxFormBytes caps a form submission (the new-run inputs).
const maxFormBytes = 4 << 20

// guard wraps the routes in the dashboard's security checks, in order:
// the Host check against DNS rebinding (403, httpguard.HostAllowed, the
// same function /mcp uses), the cross-site check for every state-changing
// request (403: a page on another origin cannot cancel or start runs, see
// crossSite), the token when one is configured (401, except /login,
// /favicon.ico and /static/), and a body cap. Every response gets nosniff
// and no framing.
//
// Go's http.CrossOriginProtection is not used: everything it checks
// (Sec-Fetch-Site, then Origin against Host) crossSite checks too, and it
// compares Origin and Host byte for byte, so it would refuse Origins that
// httpguard.OriginRule, and so /mcp, accepts (letter case, a default
// port, --allowed-origins). One rule answers for both endpoints.
func (d *Dashboard) guard(next http.Handler) http.Handler {
	origins, err := httpguard.NewOriginRule(d.opts.AllowedOrigins)
	if err != nil {
		d.log.Warn("dashboard: allowed origins: entries ignored", "error", err)
	}
	deny := func(w http.ResponseWriter, r *http.Request, why string) {
		d.log.Warn("dashboard: cross-site request refused", "method", r.Method, "path", r.URL.Path,
			"why", why, "origin", r.Header.Get("Origin"), "referer", r.Header.Get("Referer"), "sec-fetch-site", r.Header.Get("Sec-Fetch-Site"))
		http.Error(w, "Forbidden: cross-origin request ("+why+")", http.StatusForbidden)
	}
	checked := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d.opts.Token != "" && !d.authorized(r) && r.URL.Path != "/login" && r.URL.Path != "/favicon.ico" && !strings.HasPrefix(r.URL.Path, "/static/") {
			w.Header().Set("WWW-Authenticate", `Bearer realm="browsertask"`)
			http.Error(w, "Unauthorized: open /login?token=<token> once to use the dashboard", http.StatusUnauthorized)
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		}
		next.ServeHTTP(w, r)
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		if !httpguard.HostAllowed(r) {
			http.Error(w, "Forbidden: invalid Host header", http.StatusForbidden)
			return
		}
		if why := crossSite(r, origins); why != "" {
			deny(w, r, why)
			return
		}
		checked.ServeHTTP(w, r)
	})
}

// crossSite says why a state-changing request (any method but GET, HEAD
// and OPTIONS; and any request to a live view route) must be refused as coming from another origin, or "" when it
// may go on. The request's own origin is its Host. A browser tells where a
// request comes from in up to three headers, each refused when it names
// another origin:
//   - Sec-Fetch-Site other than same-origin or none (same-site too: a page
//     on localhost:3000 is another origin), unless Origin is one of
//     --allowed-origins (a page there is another site by definition, and
//     /mcp, which does not read Sec-Fetch-Site, accepts it);
//   - Origin that origins refuses (httpguard.OriginRule, the rule /mcp
//     applies: the request's own origin or --allowed-origins; "null"
//     refused);
//   - without Origin, a Referer whose origin the same rule refuses (a
//     browser that sends no Origin still sends the Referer of the page
//     that posted; http.CrossOriginProtection alone let it through).
//
// A request with none of them is not from a browser page (curl, scripts)
// and goes on: CSRF needs a victim's browser, and with a token set the
// token still has to be presented.
func crossSite(r *http.Request, origins *httpguard.OriginRule) string {
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		// The live view's frame stream shows the run's browser: checked
		// like a state change, so no other origin can open it.
		if !isLivePath(r.URL.Path) {
			return ""
		}
	}
	switch site := r.Header.Get("Sec-Fetch-Site"); site {
	case "", "same-origin", "none":
	default:
		if !origins.Listed(r.Header.Get("Origin")) {
			return "Sec-Fetch-Site: " + site
		}
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if !origins.Allows(r, origin) {
			return "Origin is another origin"
		}
		return ""
	}
	if ref := r.Header.Get("Referer"); ref != "" && !origins.AllowsURL(r, ref) {
		return "Referer is another origin"
	}
	return ""
}

// authorized reports whether r carries the token, as a bearer header or the
// login cookie, compared in constant time (httpguard.TokenEqual).
func (d *Dashboard) authorized(r *http.Request) bool {
	got, ok := httpguard.BearerToken(r)
	if !ok {
		if c, err := r.Cookie(tokenCookie); err == nil {
			got = c.Value
		}
	}
	return httpguard.TokenEqual(got, d.opts.Token)
}

// login checks ?token= and sets it as an HttpOnly, SameSite=Strict cookie,
// then redirects to the runs list so the token leaves the address bar.
func (d *Dashboard) login(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("token")
	if d.opts.Token == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if !httpguard.TokenEqual(tok, d.opts.Token) {
		http.Error(w, "Unauthorized: wrong token", http.StatusUnauthorized)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: tok, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: 30 * 24 * 3600})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
