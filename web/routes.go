package web

import (
	"io/fs"
	"net/http"

	"github.com/browsertask/browsertask/static"
)

// routes lists every dashboard route. State changes are POST only; guard
// (guard.go) puts the Host check, the cross-origin protection and the token
// in front of all of them.
func (d *Dashboard) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", d.runsPage)                                             // runs list (filters, paging, live)
	mux.HandleFunc("GET /runs", d.runsPage)                                            // the runs list too (/runs?profile=work)
	mux.HandleFunc("GET /runs/new", d.newRunPage)                                      // new run form
	mux.HandleFunc("POST /runs", d.startRun)                                           // start a run from the form
	mux.HandleFunc("GET /runs/{id}", d.runPage)                                        // run detail (live while not terminal)
	mux.HandleFunc("GET /runs/{id}/cancel", d.confirmCancelPage)                       // "cancel this run?" (Cancel without JavaScript)
	mux.HandleFunc("POST /runs/{id}/cancel", d.cancelRun)                              // cancel a run
	mux.HandleFunc("POST /runs/{id}/answer", d.answerRun)                              // answer a question the run asks
	mux.HandleFunc("POST /runs/{id}/takeover", d.takeOver)                             // take the run's browser over (live view)
	mux.HandleFunc("GET /runs/{id}/live/stream", d.liveStream)                         // the run's tabs and frames (SSE)
	mux.HandleFunc("POST /runs/{id}/live/{tab}/input", d.liveInput)                    // a person's input to a tab (takeover)
	mux.HandleFunc("POST /runs/{id}/live/{tab}/goto", d.liveGoTo)                      // the address bar: the tab goes to a URL (takeover)
	mux.HandleFunc("GET /artifacts/{id}", d.artifact)                                  // artifact download
	mux.HandleFunc("GET /history", d.historyPage)                                      // forgotten runs (expired), with their artifacts
	mux.HandleFunc("GET /sessions", d.sessionsPage)                                    // sessions in use
	mux.HandleFunc("GET /sessions/{id}", d.sessionPage)                                // a session's interactive calls
	mux.HandleFunc("GET /sessions/{id}/live/stream", d.sessionLiveStream)              // the session's tabs and frames (SSE, watch-only)
	mux.HandleFunc("GET /profiles", d.profilesPage)                                    // browser profiles, "New profile"
	mux.HandleFunc("POST /profiles", d.newProfile)                                     // create a profile: its sign-in run's live view
	mux.HandleFunc("POST /profiles/{name}/delete", d.deleteProfile)                    // delete a profile and its directory
	mux.HandleFunc("GET /templates", d.templatesPage)                                  // templates with schemas and examples
	mux.HandleFunc("GET /profile", d.profilePage)                                      // runtime profile, DB, client snippets
	mux.HandleFunc("GET /login", d.login)                                              // ?token= sets the session cookie
	mux.Handle("GET /static/", http.StripPrefix("/static/", staticHandler(static.FS))) // embedded assets
	mux.HandleFunc("GET /favicon.ico", favicon)                                        // our SVG favicon (static/favicon.svg)
	mux.HandleFunc("/", d.notFound)
	return mux
}

// favicon serves static/favicon.svg at the path browsers ask for on their
// own; the pages link it there too (layout.templ).
func favicon(w http.ResponseWriter, r *http.Request) {
	b, err := static.FS.ReadFile("favicon.svg")
	if err != nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "image/svg+xml")
	h.Set("Cache-Control", "public, max-age=86400")
	_, _ = w.Write(b)
}

// staticHandler serves the embedded assets with a day of caching.
func staticHandler(assets fs.FS) http.Handler {
	files := http.FileServerFS(assets)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=86400")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	})
}
