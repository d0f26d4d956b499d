package sitemap

import (
	"bytes"
	"testing"
)

// FuzzParse: any bytes a site serves as a sitemap parse without a panic,
// within the caps (never more entries than maxURLs), every entry an
// http(s) URL.
func FuzzParse(f *testing.F) {
	f.Add([]byte(urlset("http://a.test/1", "https://a.test/2")))
	f.Add([]byte(index("http://a.test/s.xml")))
	f.Add([]byte("http://a.test/x\nhttps://a.test/y\n"))
	f.Add([]byte(gz(f, urlset("http://a.test/g"))))
	f.Add([]byte(`<?xml version="1.0" encoding="ISO-8859-1"?><urlset><url><loc>http://a.test/</loc></url></urlset>`))
	f.Add([]byte("<urlset><url><loc>http://a.test/<![CDATA[x]]></loc><lastmod>2020</lastmod></url>"))
	f.Fuzz(func(t *testing.T, b []byte) {
		n := 0
		_, _ = Parse(bytes.NewReader(b), 1<<16, 100, func(_ Kind, e Entry) error {
			n++
			if !isHTTP(e.URL) {
				t.Fatalf("entry %q is not an http(s) URL", e.URL)
			}
			return nil
		})
		if n > 100 {
			t.Fatalf("%d entries past the cap of 100", n)
		}
	})
}
