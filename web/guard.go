package web

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/browsertask/browsertask/mcp"
)

// tokenCookie holds the dashboard token after a /login?token= visit.
const tokenCookie = "browsertask_token"

// maxFormBytes caps a form submission (the new-run inputs).
const maxFormBytes = 4 << 20

// guard wraps the routes in the dashboard's security checks, in order:
// the Host check against DNS rebinding (403), Go's cross-origin protection
// for every non-GET request (403: a page on another origin cannot cancel or
// start runs), the token when one is configured (401, except /login and
// /static/), and a body cap. Every response gets nosniff and no framing.
func (d *Dashboard) guard(next http.Handler) http.Handler {
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d.log.Warn("dashboard: cross-origin request refused", "method", r.Method, "path", r.URL.Path, "origin", r.Header.Get("Origin"))
		http.Error(w, "Forbidden: cross-origin request", http.StatusForbidden)
	}))
	var checked http.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d.opts.Token != "" && !d.authorized(r) && r.URL.Path != "/login" && !strings.HasPrefix(r.URL.Path, "/static/") {
			w.Header().Set("WWW-Authenticate", `Bearer realm="browsertask"`)
			http.Error(w, "Unauthorized: open /login?token=<token> once to use the dashboard", http.StatusUnauthorized)
			return
		}
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
		}
		next.ServeHTTP(w, r)
	})
	checked = cop.Handler(checked)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin")
		if !mcp.HostAllowed(r) {
			http.Error(w, "Forbidden: invalid Host header", http.StatusForbidden)
			return
		}
		checked.ServeHTTP(w, r)
	})
}

// authorized reports whether r carries the token, as a bearer header or the
// login cookie, compared in constant time over hashes.
func (d *Dashboard) authorized(r *http.Request) bool {
	got := ""
	if auth := r.Header.Get("Authorization"); len(auth) > 7 && strings.EqualFold(auth[:7], "bearer ") {
		got = strings.TrimSpace(auth[7:])
	} else if c, err := r.Cookie(tokenCookie); err == nil {
		got = c.Value
	}
	return tokensEqual(got, d.opts.Token)
}

// tokensEqual compares in constant time (hashing first hides the length).
func tokensEqual(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return got != "" && subtle.ConstantTimeCompare(g[:], w[:]) == 1
}

// login checks ?token= and sets it as an HttpOnly, SameSite=Strict cookie,
// then redirects to the runs list so the token leaves the address bar.
func (d *Dashboard) login(w http.ResponseWriter, r *http.Request) {
	tok := r.URL.Query().Get("token")
	if d.opts.Token == "" {
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if !tokensEqual(tok, d.opts.Token) {
		http.Error(w, "Unauthorized: wrong token", http.StatusUnauthorized)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: tokenCookie, Value: tok, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil, MaxAge: 30 * 24 * 3600})
	http.Redirect(w, r, "/", http.StatusSeeOther)
}
