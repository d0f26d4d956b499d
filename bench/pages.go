package main

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strconv"
)

// pageServer serves the same generated pages as internal/fixture's
// /page/{n} (title, #name, .price, a description meta tag and a link to the
// next page). internal/fixture needs a testing.TB, so the benchmark, which is
// a command, serves its own copy from an in-process httptest server.
func pageServer() *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /page/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, err := strconv.Atoi(r.PathValue("n"))
		if err != nil {
			http.Error(w, "bad page number", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		title := fmt.Sprintf("Page %d", n)
		desc := fmt.Sprintf("Description of page %d", n)
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>%s</title>`+
			`<meta name="description" content="%s"></head><body><h1 id="name">Item %d</h1>`+
			`<span class="price">%d.00</span><p class="text">Generated page %d.</p>`+
			`<a id="next" href="/page/%d">Page %d</a></body></html>`,
			html.EscapeString(title), html.EscapeString(desc), n, n, n, n+1, n+1)
	})
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	return httptest.NewServer(mux)
}

// pageURLs returns n distinct page URLs of srv.
func pageURLs(srv *httptest.Server, n, salt int) []string {
	urls := make([]string, n)
	for i := range urls {
		// salt keeps repeats from hitting the browser's cache of an
		// earlier repeat (every run is a fresh incognito context anyway).
		urls[i] = fmt.Sprintf("%s/page/%d", srv.URL, salt*100000+i+1)
	}
	return urls
}
