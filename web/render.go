package web

import (
	"bytes"
	"context"
	"net/http"

	"github.com/a-h/templ"

	"github.com/browsertask/browsertask/engine"
)

// render writes a component with status. When the request comes from htmx
// (HX-Request) and fragment is not nil, only the fragment is written: the
// page asked to swap one region, not to reload the frame.
func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, status int, full, fragment templ.Component) {
	c := full
	if fragment != nil && r.Header.Get("HX-Request") == "true" && r.Header.Get("HX-History-Restore-Request") != "true" {
		c = fragment
	}
	var buf bytes.Buffer
	if err := c.Render(r.Context(), &buf); err != nil {
		d.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// fail answers a domain error as a page: 404 for the not-found codes, 400
// for invalid parameters, 500 otherwise (and logged).
func (d *Dashboard) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := engine.AsError(err)
	status := errorStatus(e)
	if status == http.StatusInternalServerError && r.Context().Err() == nil {
		d.log.Error("dashboard request failed", "path", r.URL.Path, "err", err)
	}
	page := errorPage(d.page("Error", ""), errorView(e))
	var buf bytes.Buffer
	if rerr := page.Render(context.WithoutCancel(r.Context()), &buf); rerr != nil {
		http.Error(w, e.Error(), status)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// errorStatus is the HTTP status of a domain error: 404 for the not-found
// codes, 410 for an expired artifact, 400 for invalid parameters, 500
// otherwise.
func errorStatus(e *engine.Error) int {
	switch e.Code {
	case engine.RunNotFound, engine.ArtifactNotFound, engine.TemplateNotFound, engine.SessionNotFound:
		return http.StatusNotFound
	case engine.ArtifactExpired:
		return http.StatusGone
	case engine.InvalidParameter:
		return http.StatusBadRequest
	}
	return http.StatusInternalServerError
}

// notFound answers unknown paths.
func (d *Dashboard) notFound(w http.ResponseWriter, r *http.Request) {
	d.fail(w, r, &engine.Error{Code: engine.RunNotFound, Message: "no page at " + r.URL.Path,
		Recovery: "Use the navigation above."})
}

// page builds the frame view model.
func (d *Dashboard) page(title, nav string) Page {
	return Page{Title: title, Nav: nav, Version: d.opts.Version}
}
