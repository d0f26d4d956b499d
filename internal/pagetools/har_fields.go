package pagetools

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"sort"
	"strings"

	"github.com/go-rod/rod/lib/proto"
)

// The fields of a HAR entry, from CDP's events.

// end sets o's timings (HAR's phases from CDP's ResourceTiming, in ms)
// and total time, the request having ended at the monotonic time at.
func (c *harCapture) end(o *harOpen, at float64) {
	tm := &o.e.Timings
	*tm = harTimings{DNS: -1, Connect: -1, SSL: -1}
	total := max(0, (at-o.start)*1000)
	if t := o.timing; t != nil {
		phase := func(a, b float64) float64 {
			if a < 0 || b < a {
				return -1
			}
			return b - a
		}
		first := t.SendStart
		for _, v := range []float64{t.DNSStart, t.ConnectStart} {
			if v >= 0 && v < first {
				first = v
			}
		}
		tm.Blocked = max(0, first+(t.RequestTime-o.start)*1000)
		tm.DNS, tm.Connect, tm.SSL = phase(t.DNSStart, t.DNSEnd), phase(t.ConnectStart, t.ConnectEnd), phase(t.SslStart, t.SslEnd)
		tm.Send = max(0, t.SendEnd-t.SendStart)
		tm.Wait = max(0, t.ReceiveHeadersEnd-t.SendEnd)
		tm.Receive = max(0, (at-t.RequestTime)*1000-t.ReceiveHeadersEnd)
		total = tm.Blocked + max(tm.DNS, 0) + max(tm.Connect, 0) + tm.Send + tm.Wait + tm.Receive
	} else {
		tm.Wait = total
	}
	o.e.Time = total
}

// headersOf lists CDP's headers sorted by name (CDP gives a map; a
// repeated header comes as one value with newlines, split here).
func headersOf(h proto.NetworkHeaders) []harNV {
	out := []harNV{}
	for k, v := range h {
		for _, line := range strings.Split(v.Str(), "\n") {
			out = append(out, harNV{Name: k, Value: line})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func headerValue(h []harNV, name string) string {
	for _, nv := range h {
		if strings.EqualFold(nv.Name, name) {
			return nv.Value
		}
	}
	return ""
}

// queryOf lists the URL's query parameters in order.
func queryOf(u string) []harNV {
	out := []harNV{}
	pu, err := url.Parse(u)
	if err != nil || pu.RawQuery == "" {
		return out
	}
	for _, part := range strings.Split(pu.RawQuery, "&") {
		k, v, _ := strings.Cut(part, "=")
		dk, err1 := url.QueryUnescape(k)
		dv, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			dk, dv = k, v
		}
		out = append(out, harNV{Name: dk, Value: dv})
	}
	return out
}

// postDataOf is a request body as HAR's postData: a form's fields as
// params too; a body over maxHARBodyBytes is left out with a comment.
func postDataOf(mimeType, text string) *harPostData {
	pd := &harPostData{MimeType: mimeType, Params: []harNV{}}
	if len(text) > maxHARBodyBytes {
		pd.Comment = fmt.Sprintf("body of %d bytes left out (more than %d)", len(text), maxHARBodyBytes)
		return pd
	}
	pd.Text = text
	if strings.HasPrefix(strings.ToLower(mimeType), "application/x-www-form-urlencoded") {
		pd.Params = queryOf("?" + text)
	}
	return pd
}

// setContent keeps a response body within maxHARBodyBytes.
func setContent(c *harContent, b *proto.NetworkGetResponseBodyResult) {
	n := len(b.Body)
	if b.Base64Encoded {
		n = base64.StdEncoding.DecodedLen(len(b.Body))
	}
	c.Size = max(c.Size, n)
	if n > maxHARBodyBytes {
		c.Comment = fmt.Sprintf("body of %d bytes left out (more than %d)", n, maxHARBodyBytes)
		return
	}
	c.Text = b.Body
	if b.Base64Encoded {
		c.Encoding = "base64"
	}
}

// httpVersion spells CDP's protocol ("http/1.1", "h2") as HAR does.
func httpVersion(p string) string {
	switch strings.ToLower(p) {
	case "", "http/1.1":
		return "HTTP/1.1"
	case "h2":
		return "HTTP/2"
	case "h3":
		return "HTTP/3"
	}
	return strings.ToUpper(p)
}
