package content

import (
	"os"
	"testing"
	"time"
)

// TestPublishedFromRealSignalsOnly: a page whose only date is its
// "© 2024" footer has no published date (go-htmldate alone answers
// 2024-01-01); a page with article:published_time has that date, not its
// footer's year.
func TestPublishedFromRealSignalsOnly(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"testdata/copyright-only.html", ""},
		{"testdata/published-meta.html", "2023-11-08"},
		{"testdata/guide.html", "2024-03-05"},
	} {
		body, err := os.ReadFile(c.file)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Extract(body, Options{PageURL: "http://127.0.0.1:8080/news/page.html"})
		if err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		if res.Metadata.Published != c.want {
			t.Errorf("%s: published = %q, want %q", c.file, res.Metadata.Published, c.want)
		}
	}
}

// TestPublishedSignals covers each kind of signal on a small page: JSON-LD
// datePublished, a <time datetime> in the article's header, a date in the
// page's URL, a date written out in the text; and the fallbacks that are
// refused: a copyright meta year, a year alone, a month without a day.
func TestPublishedSignals(t *testing.T) {
	const body = `<p>The committee met on the river bank and agreed on the new timetable for the ferry, which starts next week.</p>`
	for _, c := range []struct{ name, page, url, want string }{
		{"JSON-LD datePublished", `<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle","headline":"Ferry","datePublished":"2022-06-14T08:00:00Z","dateModified":"2023-01-02T08:00:00Z"}</script><article>` + body + `</article>`, "", "2022-06-14"},
		{"time in the article header", `<article><header><h1>Ferry</h1><time datetime="2021-09-30">30 September</time></header>` + body + `</article>`, "", "2021-09-30"},
		{"date in the URL", `<article>` + body + `</article>`, "http://127.0.0.1/2020/02/17/ferry.html", "2020-02-17"},
		{"date in the text", `<article><p class="byline">Published 3 March 2019 by the desk</p>` + body + `</article>`, "", "2019-03-03"},
		{"copyright meta year", `<meta itemprop="copyrightYear" content="2017"><article>` + body + `</article>`, "", ""},
		{"copyright footer", `<article>` + body + `</article><footer>Copyright 2015-2024 Ferry Co.</footer>`, "", ""},
		{"a month without a day", `<article><p>Issue of March 2018</p>` + body + `</article>`, "", ""},
		{"no date at all", `<article>` + body + `</article>`, "", ""},
	} {
		u := c.url
		if u == "" {
			u = "http://127.0.0.1/ferry"
		}
		res, err := Extract([]byte(`<html><head><title>Ferry</title></head><body>`+c.page+`</body></html>`), Options{PageURL: u})
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if res.Metadata.Published != c.want {
			t.Errorf("%s: published = %q, want %q", c.name, res.Metadata.Published, c.want)
		}
	}
}

// TestNamesDay pins the test on the text a date was read from.
func TestNamesDay(t *testing.T) {
	d := func(s string) time.Time {
		v, err := time.Parse(time.DateOnly, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct {
		src, date string
		want      bool
	}{
		{"2024-03-05T10:00:00Z", "2024-03-05", true},
		{"March 1, 2024", "2024-03-01", true},
		{"15.03.24", "2024-03-15", true},
		{"2024", "2024-01-01", false},
		{"03/2024", "2024-03-01", false},
		{"© 2024 Example", "2024-01-01", false},
		{"Copyright 1 January 2024", "2024-01-01", false},
		{"2001", "2001-01-01", false},
		{"http://127.0.0.1/2020/02/17/ferry.html", "2020-02-17", true},
	} {
		if got := namesDay(c.src, d(c.date)); got != c.want {
			t.Errorf("namesDay(%q, %s) = %v, want %v", c.src, c.date, got, c.want)
		}
	}
}
