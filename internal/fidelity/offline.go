package fidelity

import (
	"regexp"
	"strings"

	"golang.org/x/net/html"
)

// Pages the saved corpus cannot show a browser as the web did. The corpus
// is served offline: every outside host fails at once (Chromium resolves
// no name but loopback). Two kinds of page then read differently in
// Chromium for a reason that is the harness's, not a rule of either
// path; the report counts them with the pages that did not finish, with
// their own cause, so that the figures are about reading, and lists each.
const (
	// CauseAMPRuntime: an AMP page's boilerplate style hides its body
	// (the -amp-start animation, 8 s of visibility: hidden) until the AMP
	// runtime, loaded from cdn.ampproject.org, starts. Offline it never
	// does, and Chromium reads a hidden page at load; on the web the
	// runtime shows the body within a moment, and the HTTP path, which
	// runs no animation, reads what a reader sees.
	CauseAMPRuntime = "amp-runtime-offline"
	// CauseScriptNavigation: the page's own script sends the browser to
	// another URL (to https, or to the site's own host when it is not
	// served from it). Offline that URL fails: the browser ends on an
	// error page or reads an empty document mid-navigation.
	CauseScriptNavigation = "script-navigation"
)

// locationAssign finds a script assigning the page's location (the
// redirects of the saved pages: `document.location = …replace(/^http:/,
// "https:")`, `window.location = window.atob(…)`,
// `window.location.href = 'https' + …`, location.replace(…)). It is a
// hint for the classifier, as hideRule is, not a parser of JavaScript.
var locationAssign = regexp.MustCompile(`\blocation(\.href)?\s*=[^=]|\blocation\.(replace|assign)\s*\(`)

// noteScript records what an inline script's text says about navigation.
func (s *Source) noteScript(n *html.Node) {
	if t, ok := attr(n, "type"); ok && t != "" && !strings.Contains(strings.ToLower(t), "javascript") && !strings.EqualFold(t, "module") {
		return // JSON data, templates: not run
	}
	if locationAssign.MatchString(textOf(n)) {
		s.Navigates = true
	}
}

// noteStyle records an AMP boilerplate style.
func (s *Source) noteStyle(n *html.Node, css string) {
	if _, ok := attr(n, "amp-boilerplate"); ok && strings.Contains(css, "-amp-start") {
		s.AMPBoilerplate = true
	}
}

// offlineCause names why the browser's reading of a page both paths
// loaded is the offline harness's doing (a Cause constant), or "":
//   - an AMP page whose body Chromium read hidden: its text less than
//     half the HTTP path's (what shows is only what sets visibility:
//     visible itself);
//   - a page whose script navigates and whose browser reading is empty
//     (no title, text or link) while the HTTP path read one.
func offlineCause(b, h Page, src *Source) string {
	if src == nil || b.Error != nil || h.Error != nil {
		return ""
	}
	bt, ht := len(Tokens(deref(b.Text))), len(Tokens(deref(h.Text)))
	switch {
	case src.AMPBoilerplate && ht > 0 && bt*2 < ht:
		return CauseAMPRuntime
	case src.Navigates && b.Title == "" && bt == 0 && len(b.Links) == 0 && (h.Title != "" || ht > 0):
		return CauseScriptNavigation
	}
	return ""
}

// markOffline returns the browser's page b with an error (code OFFLINE,
// the cause as message) when offlineCause finds one: the page then counts
// as not finished in the browser, class "page-failed:" + cause.
func markOffline(b, h Page, src *Source) Page {
	if cause := offlineCause(b, h, src); cause != "" {
		b.Error = &PageError{ErrorCode: "OFFLINE", Message: cause}
	}
	return b
}
