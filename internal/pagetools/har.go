package pagetools

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// Bounds of a network capture: entries kept (later requests are counted
// in the log's comment), bytes of one request or response body kept when
// bodies are asked for (a larger body is left out with a comment).
const (
	maxHAREntries   = 2000
	maxHARBodyBytes = 64 << 10
)

// harCapture records the network traffic of a session's page from
// browser_network start to stop (CDP Network events on the page's
// target, so every frame of the page that shares its process; requests
// refused by the URL policy show as failed).
type harCapture struct {
	mu   sync.Mutex
	base *rod.Page // the page, bound to no capture's context
	page *rod.Page
	// mark is the URL of the request stop makes to know every event
	// before it was handled; marked is closed when it was.
	mark    string
	marked  chan struct{}
	bodies  bool
	started time.Time
	entries []*harEntry
	open    map[proto.NetworkRequestID]*harOpen
	extraRq map[proto.NetworkRequestID][]harNV
	extraRs map[proto.NetworkRequestID][]harNV
	dropped int
	// wasOn: the Network domain was on before the capture (left on).
	wasOn  bool
	cancel context.CancelFunc
	done   chan struct{}
}

// harOpen is a request the capture waits on: its entry and the monotonic
// times its timings are computed from.
type harOpen struct {
	e      *harEntry
	start  float64 // requestWillBeSent, seconds
	timing *proto.NetworkResourceTiming
}

// startHAR starts capturing page's traffic; the Network domain is on when
// it returns. Errors: CDP's, when the domain cannot be turned on.
func startHAR(page *rod.Page, bodies bool) (*harCapture, error) {
	ctx, cancel := context.WithCancel(context.Background())
	c := &harCapture{base: page, page: page.Context(ctx), bodies: bodies, started: time.Now(), open: map[proto.NetworkRequestID]*harOpen{},
		extraRq: map[proto.NetworkRequestID][]harNV{}, extraRs: map[proto.NetworkRequestID][]harNV{}, cancel: cancel, done: make(chan struct{})}
	// The Network domain is turned on here, on the page's own context, and
	// off by stop unless it was on before (SetIdentity's headers need it):
	// EachEvent's own restore would run on the capture's cancelled
	// context, where Chromium may get the disable while go-rod, seeing the
	// call fail, still counts the domain as on, and the next capture would
	// then never turn it on again.
	c.wasOn = page.Browser().LoadState(page.SessionID, &proto.NetworkEnable{})
	if !c.wasOn {
		if err := (proto.NetworkEnable{}).Call(page); err != nil {
			cancel()
			return nil, err
		}
	}
	wait := c.page.EachEvent(c.onRequest, c.onResponse, c.onFinished, c.onFailed, c.onRequestExtra, c.onResponseExtra)
	engine.Go(ctx, nil, "pagetools.har", func() { defer close(c.done); wait() }, nil)
	return c, nil
}

// stop ends the capture and returns its entries, those still waiting on
// an answer included (status 0).
func (c *harCapture) stop() []*harEntry {
	c.flush()
	c.cancel()
	<-c.done
	if !c.wasOn {
		ctx, cancel := context.WithTimeout(context.Background(), markTimeout)
		_ = proto.NetworkDisable{}.Call(c.base.Context(ctx))
		cancel()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, o := range c.open {
		o.e.Response.StatusText = ""
		o.e.Comment = "no answer before the capture stopped"
	}
	c.open = map[proto.NetworkRequestID]*harOpen{}
	return c.entries
}

// markTimeout bounds flush on a page that does not answer (hung,
// crashed, closed): the capture then ends with what it handled.
const markTimeout = 5 * time.Second

// flush makes the page request a data: URL of its own (from an isolated
// world, where no page script changed fetch) and waits until the capture
// handled that request's event: CDP delivers a target's events in order,
// so every request made before stop was called has been recorded then.
// Stopping at once would drop the events still queued for the capture.
func (c *harCapture) flush() {
	c.mu.Lock()
	c.mark = fmt.Sprintf("data:text/plain,browsertask-har-end-%p-%d", c, time.Now().UnixNano())
	c.marked = make(chan struct{})
	marked := c.marked
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), markTimeout)
	defer cancel()
	p := c.base.Context(ctx)
	world, err := proto.PageCreateIsolatedWorld{FrameID: p.FrameID, WorldName: "browsertask-har"}.Call(p)
	if err == nil {
		_, err = proto.RuntimeEvaluate{Expression: "fetch(" + strconv.Quote(c.mark) + ").catch(() => {})", ContextID: world.ExecutionContextID}.Call(p)
	}
	if err != nil {
		return
	}
	select {
	case <-marked:
	case <-ctx.Done():
	}
}

func (c *harCapture) onRequest(e *proto.NetworkRequestWillBeSent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mark != "" && e.Request.URL == c.mark {
		close(c.marked)
		c.mark = ""
		return
	}
	if prev := c.open[e.RequestID]; prev != nil && e.RedirectResponse != nil {
		c.respond(prev, e.RedirectResponse, e.RequestID)
		prev.e.Response.RedirectURL = e.Request.URL
		c.end(prev, float64(e.Timestamp))
		delete(c.open, e.RequestID)
	}
	if len(c.entries) >= maxHAREntries {
		c.dropped++
		return
	}
	r := e.Request
	u := r.URL + r.URLFragment
	en := &harEntry{StartedDateTime: e.WallTime.Time().UTC().Format(time.RFC3339Nano),
		Request: harRequest{Method: r.Method, URL: u, HTTPVersion: "HTTP/1.1", Cookies: []harNV{}, Headers: headersOf(r.Headers),
			QueryString: queryOf(u), HeadersSize: -1, BodySize: 0},
		Response: harResponse{Cookies: []harNV{}, Headers: []harNV{}, HTTPVersion: "", HeadersSize: -1, BodySize: -1}}
	if h, ok := c.extraRq[e.RequestID]; ok {
		en.Request.Headers = h
		delete(c.extraRq, e.RequestID)
	}
	if r.HasPostData {
		text := r.PostData
		if text == "" && c.bodies {
			if res, err := (proto.NetworkGetRequestPostData{RequestID: e.RequestID}).Call(c.page); err == nil {
				text = res.PostData
			}
		}
		en.Request.BodySize = len(text)
		if c.bodies {
			en.Request.PostData = postDataOf(headerValue(en.Request.Headers, "Content-Type"), text)
		}
	}
	c.entries = append(c.entries, en)
	c.open[e.RequestID] = &harOpen{e: en, start: float64(e.Timestamp)}
}

func (c *harCapture) onResponse(e *proto.NetworkResponseReceived) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o := c.open[e.RequestID]; o != nil {
		c.respond(o, e.Response, e.RequestID)
	}
}

// respond fills o's response from r.
func (c *harCapture) respond(o *harOpen, r *proto.NetworkResponse, id proto.NetworkRequestID) {
	res := &o.e.Response
	res.Status, res.StatusText = r.Status, r.StatusText
	res.HTTPVersion = httpVersion(r.Protocol)
	o.e.Request.HTTPVersion = res.HTTPVersion
	res.Headers = headersOf(r.Headers)
	if h, ok := c.extraRs[id]; ok {
		res.Headers = h
		delete(c.extraRs, id)
	}
	if len(r.RequestHeaders) > 0 {
		o.e.Request.Headers = headersOf(r.RequestHeaders)
	}
	res.Content.MimeType = r.MIMEType
	res.RedirectURL = headerValue(res.Headers, "Location")
	o.e.ServerIPAddress = strings.Trim(r.RemoteIPAddress, "[]")
	o.timing = r.Timing
}

func (c *harCapture) onFinished(e *proto.NetworkLoadingFinished) {
	c.mu.Lock()
	o := c.open[e.RequestID]
	delete(c.open, e.RequestID)
	c.mu.Unlock()
	if o == nil {
		return
	}
	var body *proto.NetworkGetResponseBodyResult
	if c.bodies {
		body, _ = proto.NetworkGetResponseBody{RequestID: e.RequestID}.Call(c.page)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	o.e.Response.BodySize = int(e.EncodedDataLength)
	o.e.Response.Content.Size = int(e.EncodedDataLength)
	if body != nil {
		setContent(&o.e.Response.Content, body)
	}
	c.end(o, float64(e.Timestamp))
}

func (c *harCapture) onFailed(e *proto.NetworkLoadingFailed) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o := c.open[e.RequestID]; o != nil {
		o.e.Comment = "failed: " + e.ErrorText
		if e.BlockedReason != "" {
			o.e.Comment += " (" + string(e.BlockedReason) + ")"
		}
		c.end(o, float64(e.Timestamp))
		delete(c.open, e.RequestID)
	}
}

// onRequestExtra takes the headers as sent (with Cookie, which
// requestWillBeSent leaves out).
func (c *harCapture) onRequestExtra(e *proto.NetworkRequestWillBeSentExtraInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o := c.open[e.RequestID]; o != nil && o.e.Response.Status == 0 {
		o.e.Request.Headers = headersOf(e.Headers)
		return
	}
	c.extraRq[e.RequestID] = headersOf(e.Headers)
}

// onResponseExtra takes the headers as received (with Set-Cookie).
func (c *harCapture) onResponseExtra(e *proto.NetworkResponseReceivedExtraInfo) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if o := c.open[e.RequestID]; o != nil && o.e.Response.Status != 0 {
		o.e.Response.Headers = headersOf(e.Headers)
		return
	}
	c.extraRs[e.RequestID] = headersOf(e.Headers)
}

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
