package web

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// liveSource is what one live stream shows, asked on every tick: the view
// now (nil: nothing to send yet) and whether the stream is over (the view
// is sent, then "end"). An error ends the stream with "end". It is the
// seam between the one streamer and what it streams: a run's tabs
// (liveStream: the run's status and whether it runs here) or a session's
// (sessionLiveStream: the session open and living here).
type liveSource func(ctx context.Context) (lv *LiveView, over bool, err error)

// serveLive streams the tabs filed under key (a run id or a session's key,
// Live.SessionLiveKey) as src describes them: a "tabs" event whenever the
// panels change, a "frame-<tab>" event per frame of each open tab shown,
// "end" when src says it is over.
func (d *Dashboard) serveLive(w http.ResponseWriter, r *http.Request, key string, src liveSource) {
	ctx := r.Context()
	width := queryInt(r, "w", liveDefaultWidth)
	height := queryInt(r, "h", liveDefaultHeight)
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	s := &liveStreamer{d: d, w: w, rc: rc, key: key, width: width, height: height,
		watching: map[string]context.CancelFunc{}, hidden: map[string]bool{}, frames: make(chan tabFrame, 16)}
	wctx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	tick := time.NewTicker(liveTick)
	defer tick.Stop()
	for {
		lv, over, err := src(wctx)
		if err != nil {
			_ = s.send("end", "")
			return
		}
		if lv != nil && s.show(wctx, lv, over) {
			return
		}
		for wait := true; wait; {
			select {
			case <-ctx.Done():
				return
			case f := <-s.frames:
				if s.hidden[f.tab] {
					continue
				}
				if s.send(frameEvent(f.tab), `<img class="shot" src="`+frameURL(f.frame)+`" data-seq="`+strconv.FormatInt(f.frame.Seq, 10)+`" alt="">`) != nil {
					return
				}
			case <-tick.C:
				wait = false
			}
		}
	}
}

// liveStreamer is one viewer's stream.
type liveStreamer struct {
	d             *Dashboard
	w             http.ResponseWriter
	rc            *http.ResponseController
	key           string // the tabs' registry key: a run id or a session's key
	width, height int
	watching      map[string]context.CancelFunc // a tab's watch, ended by its func
	hidden        map[string]bool               // tabs whose frames are not shown now
	frames        chan tabFrame
	lastTabs      string
}

// tabFrame is a frame of one tab.
type tabFrame struct {
	tab   string
	frame engine.LiveFrame
}

// show sends the tabs when they changed and watches new ones; it reports
// true once the stream is over (over, or the viewer is gone).
func (s *liveStreamer) show(ctx context.Context, lv *LiveView, over bool) bool {
	d := s.d
	var buf bytes.Buffer
	if err := liveTabs(*lv).Render(ctx, &buf); err != nil {
		return true
	}
	// Frames change on every event; the panels are resent only when what
	// they say changes.
	sig := liveSignature(lv)
	if sig != s.lastTabs {
		s.lastTabs = sig
		if s.send("tabs", buf.String()) != nil {
			return true
		}
	}
	if over {
		_ = s.send("end", "")
		return true
	}
	for _, t := range lv.Tabs {
		s.hidden[t.ID] = t.Hidden
		if stop, ok := s.watching[t.ID]; ok && (t.Hidden || t.Closed) {
			stop()
			delete(s.watching, t.ID)
			if t.Hidden {
				d.live.ForgetFrames(s.key) // a frame taken before the stop
			}
		}
		if t.Closed || t.Hidden || s.watching[t.ID] != nil {
			continue
		}
		tctx, stop := context.WithCancel(ctx)
		ch, err := d.live.WatchTab(tctx, s.key, t.ID, s.width, s.height)
		if err != nil {
			stop()
			continue
		}
		s.watching[t.ID] = stop
		tab := t.ID
		engine.Go(ctx, nil, "web.live.frames", func() {
			for f := range ch {
				select {
				case s.frames <- tabFrame{tab: tab, frame: f}:
				case <-ctx.Done():
					return
				}
			}
		}, nil)
	}
	return false
}

// liveSignature is what the tab panels say, frames aside.
func liveSignature(lv *LiveView) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%t|%t|%s|%s|%s\n", lv.Control, lv.CanTakeOver, lv.Note, lv.Elsewhere, lv.ElsewhereURL)
	for _, t := range lv.Tabs {
		fmt.Fprintf(&b, "%s|%s|%s|%s|%t|%t|%t\n", t.ID, t.Label, t.URL, t.Title, t.Closed, t.Frame != "", t.Hidden)
	}
	return b.String()
}

// send writes one event (data split into lines, as SSE wants) and flushes.
func (s *liveStreamer) send(event, data string) error {
	var b strings.Builder
	b.WriteString("event: " + event + "\n")
	for _, line := range strings.Split(data, "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	if _, err := s.w.Write([]byte(b.String())); err != nil {
		return err
	}
	return s.rc.Flush()
}
