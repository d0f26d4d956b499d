package content

import (
	"strconv"
	"strings"
	"time"
	"unicode"

	htmldate "github.com/markusmobius/go-htmldate"
	"golang.org/x/net/html"
)

// publishedDate is the day the page says it was published, as
// "2006-01-02", or "" when it does not say.
//
// The search is go-htmldate's (the one go-trafilatura runs): the
// page's URL (/2024/03/15/…), its meta tags (article:published_time,
// datePublished, pubdate, …), JSON-LD datePublished, <abbr> and <time
// datetime> elements, elements whose class or id names a date, and its
// extensive search of the text, preferring the original date to the last
// update. When all of those fail, go-htmldate falls back to the page's
// copyright year ("© 2024" becomes 2024-01-01), to a year alone, or to a
// month without a day; none of those is a publication date (every page
// of a site carries the same footer), so an answer is kept only when the
// text it was read from names a day: it holds the year and, as a number
// of its own, the day of the month, and it is not a copyright notice.
// A date given only as a month and a year is left out too: the format
// names a day, and inventing the first of the month would be wrong.
//
// pageURL is the page's canonical address when it has one (as
// go-trafilatura passes it), else its own.
func publishedDate(doc *html.Node, pageURL string) string {
	res, err := htmldate.FromDocument(doc, htmldate.Options{
		URL:             pageURL,
		UseOriginalDate: true,
	})
	if err != nil || res.IsZero() || !namesDay(res.SrcString, res.DateTime) {
		return ""
	}
	return res.DateTime.Format(time.DateOnly)
}

// namesDay reports whether src, the text a date d was read from, names
// its day: the year appears in it as a number of its own (four digits, or
// two in a date of three numbers such as 15.03.24), the day of the month
// as another number (one or two digits), and src is not a copyright
// notice.
func namesDay(src string, d time.Time) bool {
	if copyrightNotice(src) {
		return false
	}
	nums := strings.FieldsFunc(src, func(r rune) bool { return !unicode.IsDigit(r) })
	yearAt := -1
	for i, n := range nums {
		if n == strconv.Itoa(d.Year()) {
			yearAt = i
			break
		}
	}
	if yearAt < 0 && len(nums) >= 3 {
		yy := strconv.Itoa(d.Year() % 100)
		for i, n := range nums {
			if n == yy || n == "0"+yy {
				yearAt = i
			}
		}
	}
	if yearAt < 0 {
		return false
	}
	for i, n := range nums {
		if i == yearAt || len(n) > 2 {
			continue
		}
		if v, err := strconv.Atoi(n); err == nil && v == d.Day() {
			return true
		}
	}
	return false
}

// copyrightNotice reports whether s is a copyright line ("© 2024 Foo",
// "&copy; 2019", "Copyright 2018", "(c) 2020").
func copyrightNotice(s string) bool {
	l := strings.ToLower(s)
	return strings.Contains(l, "©") || strings.Contains(l, "&copy") ||
		strings.Contains(l, "copyright") || strings.Contains(l, "(c)")
}
