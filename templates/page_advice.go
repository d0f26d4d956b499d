package templates

import (
	"fmt"
	"net/http"

	"github.com/browsertask/browsertask/engine"
)

// Recovery advice that follows a page's failure: STEP_EXECUTION_FAILED's
// contract advice ("Retry, or repair the failed step") misleads for a
// page that does not exist or is too large, where retrying changes
// nothing. These errors keep their code and say what helps.

// httpStatusError is a page that answered an HTTP error status, with the
// advice for that status.
func httpStatusError(url string, status int, text string) *engine.Error {
	e := engine.Errorf(engine.StepExecutionFailed, "%s answered HTTP %d %s", url, status, text).
		WithDetails(map[string]any{"url": url, "httpStatus": status})
	e.Recovery = httpStatusAdvice(status)
	return e
}

// httpStatusAdvice says what helps after an HTTP error status.
func httpStatusAdvice(status int) string {
	switch {
	case status == http.StatusNotFound || status == http.StatusGone:
		return "The page does not exist: check the URL (a typo, a moved page: follow the site's links or its sitemap); retrying will not help."
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return "The site refuses the page without a login: log in with the login template in a session and pass its sessionId, or leave the URL out; retrying as is will not help."
	case status == http.StatusTooManyRequests:
		return "The site limits how fast it is read: retry later with a lower concurrency."
	case status >= 500:
		return "The server failed: retry later; if it keeps failing, the page is broken on the site's side."
	}
	return fmt.Sprintf("The site answered HTTP %d for this page: check the URL and what the site expects; retrying as is will likely give the same answer.", status)
}

// tooLargeError is a page whose body is over the HTTP path's limit: it
// failed (nothing is extracted from a cut page), and the browser, which
// has no such limit, reads it.
func tooLargeError(url string, limit int64) *engine.Error {
	e := engine.Errorf(engine.StepExecutionFailed, "%s failed: its body is larger than the %d MiB limit of render \"http\", so it was not extracted (a cut page would give wrong fields and text)", url, limit>>20).
		WithDetails(map[string]any{"url": url, "reason": fmt.Sprintf("body over %d bytes", limit), "limitBytes": limit})
	e.Recovery = "The limit is fixed for render \"http\"; read this page with render \"browser\" (no size limit): resubmit it alone with inputs.render \"browser\", or the whole list with render \"auto\" or \"browser\"."
	return e
}
