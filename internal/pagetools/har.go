package pagetools

import (
	"context"
	"fmt"
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
