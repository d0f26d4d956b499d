package web

import (
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/browsertask/browsertask/engine"
)

// The live view's address bar. Every takeover gets it, not only a
// profile's sign-in: a person who took over any run may need to go
// somewhere (back to the start of a flow, to a page the run never
// reached), and the address bar is held to the same rules as the run
// itself — the process's URL policy decides before the browser is asked,
// and the input is accepted only during a takeover, by the process that
// runs the run.

// maxAddressLen bounds what the address bar accepts.
const maxAddressLen = 8192

// liveGoTo serves POST /runs/{id}/live/{tab}/goto (form field url): the
// tab goes to the address, as a browser's address bar would. htmx gets a
// short answer for beside the bar (200 with the refusal too, so it shows);
// a plain form is redirected to the live view, or gets the error page.
func (d *Dashboard) liveGoTo(w http.ResponseWriter, r *http.Request) {
	id, tab := r.PathValue("id"), r.PathValue("tab")
	r.Body = http.MaxBytesReader(w, r.Body, 2*maxAddressLen)
	err := d.goTo(r, id, tab)
	htmx := r.Header.Get("HX-Request") == "true"
	switch {
	case err == nil && htmx:
		d.render(w, r, http.StatusOK, goToReply("Going there…", false), goToReply("Going there…", false))
	case err == nil:
		http.Redirect(w, r, "/runs/"+url.PathEscape(id)+"#live", http.StatusSeeOther)
	case htmx:
		e := engine.AsError(err)
		d.render(w, r, http.StatusOK, goToReply(e.Message, true), goToReply(e.Message, true))
	default:
		d.fail(w, r, err)
	}
}

// goTo checks a person's navigation request and hands it to the browser.
func (d *Dashboard) goTo(r *http.Request, id, tab string) error {
	if err := r.ParseForm(); err != nil {
		return engine.Errorf(engine.InvalidParameter, "the address form could not be read: %v", err).
			WithDetails(map[string]any{"field": "url"})
	}
	addr, err := normalizeAddress(r.PostForm.Get("url"))
	if err != nil {
		return err
	}
	run, err := d.eng.Get(r.Context(), id)
	if err != nil {
		return err
	}
	if where := d.eng.LiveLocation(r.Context(), run); !where.Here || d.live == nil {
		return engine.Errorf(engine.InvalidParameter, "run %s does not run in this process: use the address bar on the dashboard of the process that runs it", id).
			WithDetails(map[string]any{"field": "runId"})
	}
	if !d.inTakeover(r.Context(), id) {
		return engine.Errorf(engine.InvalidParameter, "run %s is not waiting for a takeover: press Take over first (the address bar works only during a takeover)", id).
			WithDetails(map[string]any{"field": "runId"})
	}
	if err := d.live.GoTo(r.Context(), id, tab, addr); err != nil {
		return err
	}
	d.log.Info("a person sent a run's tab to an address", "runId", id, "tab", tab)
	return nil
}

// normalizeAddress turns what a person typed into the address bar into a
// URL, as a browser's bar does: an address with a scheme stays as typed
// (the URL policy then decides on it, file: and javascript: included); a
// bare host gets http:// when it is localhost or an IP literal (local
// servers seldom speak TLS) and https:// otherwise. Errors:
// INVALID_PARAMETER naming field url (empty, too long, control characters).
func normalizeAddress(typed string) (string, error) {
	s := strings.TrimSpace(typed)
	bad := func(why string) error {
		return engine.Errorf(engine.InvalidParameter, "url: %s; type an address such as https://example.com/", why).
			WithDetails(map[string]any{"field": "url"})
	}
	switch {
	case s == "":
		return "", bad("the address is empty")
	case len(s) > maxAddressLen:
		return "", bad("the address is longer than 8192 bytes")
	case strings.ContainsFunc(s, func(c rune) bool { return c < 0x20 || c == 0x7f }):
		return "", bad("the address holds control characters")
	}
	if hasScheme(s) {
		return s, nil
	}
	host := s
	if i := strings.IndexAny(host, "/?#"); i >= 0 {
		host = host[:i]
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(strings.ToLower(host), "[]")
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || net.ParseIP(host) != nil {
		return "http://" + s, nil
	}
	return "https://" + s, nil
}

// hasScheme reports whether s starts with a URL scheme followed by "//"
// or is one of the schemes written without it (file:, about:, data:,
// javascript:, blob:, chrome:, view-source:, mailto:); "localhost:8080"
// is a host and port, not a scheme.
func hasScheme(s string) bool {
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return false
	}
	for j, c := range s[:i] {
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !alpha && (j == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return false
		}
	}
	if strings.HasPrefix(s[i+1:], "//") {
		return true
	}
	switch strings.ToLower(s[:i]) {
	case "file", "about", "data", "javascript", "blob", "chrome", "view-source", "mailto":
		return true
	}
	return false
}
