package pagetools

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// Console bounds: what a tab keeps and what one answer carries. A page
// that logs in a loop must neither grow the daemon nor flood the model's
// context: the oldest messages go first (the answer says how many), and a
// message's text is cut to consoleTextLimit runes.
const (
	consoleKeep      = 500
	consoleMaxAnswer = 200
	consoleDefault   = 50
	consoleTextLimit = 1000
)

// consoleMsg is one console message or uncaught error of a tab.
type consoleMsg struct {
	// Seq numbers the messages of all the session's tabs in the order they
	// arrived, from 1.
	Seq int64 `json:"seq"`
	// Level is log, info, debug, warning or error for console calls and
	// browser messages, exception for an uncaught error.
	Level string `json:"level"`
	Text  string `json:"text"`
	// URL and Line say where it was logged or thrown, when known.
	URL  string `json:"url,omitempty"`
	Line int    `json:"line,omitempty"`
	// At is when it arrived, Unix ms.
	At int64 `json:"at"`
}

// consoleLog keeps the latest consoleKeep messages of one tab.
type consoleLog struct {
	seq *atomic.Int64
	mu  sync.Mutex
	// msgs are in Seq order; dropped counts the older ones let go.
	msgs    []consoleMsg
	dropped int
	// read is the last Seq browser_console answered (guarded by page.mu).
	read int64
}

func newConsoleLog(seq *atomic.Int64) *consoleLog { return &consoleLog{seq: seq} }

// add appends a message, letting the oldest go past consoleKeep.
func (c *consoleLog) add(level, text, url string, line int) {
	text = strings.TrimSpace(text)
	if r := []rune(text); len(r) > consoleTextLimit {
		text = string(r[:consoleTextLimit]) + "… (cut)"
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, consoleMsg{Seq: c.seq.Add(1), Level: level, Text: text, URL: url, Line: line, At: time.Now().UnixMilli()})
	if n := len(c.msgs) - consoleKeep; n > 0 {
		c.msgs = append(c.msgs[:0:0], c.msgs[n:]...)
		c.dropped += n
	}
}

// after returns up to limit messages with Seq > since, the number of
// messages after since that were let go before anybody read them, and
// whether more remain.
func (c *consoleLog) after(since int64, limit int) (out []consoleMsg, lost int, more bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.msgs) > 0 && c.msgs[0].Seq > since+1 && c.dropped > 0 {
		// Seqs are shared by the session's tabs, so the gap is an upper
		// bound: count only what this tab let go after since.
		lost = min(c.dropped, int(c.msgs[0].Seq-since-1))
	}
	for _, m := range c.msgs {
		if m.Seq <= since {
			continue
		}
		if len(out) == limit {
			return out, lost, true
		}
		out = append(out, m)
	}
	return out, lost, false
}

// watchConsole reads the console calls, uncaught errors and browser
// messages (Log domain: a failed resource, a CSP refusal) of page into log
// until ctx ends, and calls gone when the page closes or crashes. What a popup logged before the tools adopted it (at the
// first call after it opened) is not read: Chromium does not replay it to
// a session attached later. Frames in another process (cross-site
// iframes) log to their own target and are not read either.
func watchConsole(ctx context.Context, page *rod.Page, log *consoleLog, gone context.CancelFunc) {
	wait := page.Context(ctx).EachEvent(
		func(*proto.InspectorDetached) { gone() },
		func(*proto.InspectorTargetCrashed) { gone() },
		func(e *proto.RuntimeConsoleAPICalled) {
			parts := make([]string, 0, len(e.Args))
			for _, a := range e.Args {
				parts = append(parts, remoteText(a))
			}
			url, line := "", 0
			if e.StackTrace != nil && len(e.StackTrace.CallFrames) > 0 {
				url, line = e.StackTrace.CallFrames[0].URL, e.StackTrace.CallFrames[0].LineNumber+1
			}
			log.add(consoleLevel(string(e.Type)), strings.Join(parts, " "), url, line)
		},
		func(e *proto.RuntimeExceptionThrown) {
			d := e.ExceptionDetails
			if d == nil {
				return
			}
			text := d.Text
			if d.Exception != nil && d.Exception.Description != "" {
				text = d.Exception.Description
			}
			log.add("exception", text, d.URL, d.LineNumber+1)
		},
		func(e *proto.LogEntryAdded) {
			if e.Entry != nil {
				log.add(consoleLevel(string(e.Entry.Level)), e.Entry.Text, e.Entry.URL, 0)
			}
		},
	)
	engine.Go(ctx, nil, "pagetools.console", wait, nil)
	// The page's own session may end without a word: the browser's
	// detach of that session says it too.
	session := page.SessionID
	detached := page.Browser().Context(ctx).EachEvent(func(e *proto.TargetDetachedFromTarget) bool {
		if e.SessionID == session {
			gone()
			return true
		}
		return false
	})
	engine.Go(ctx, nil, "pagetools.tabGone", detached, nil)
}

// consoleLevel maps CDP's console types and log levels onto the five
// levels answered.
func consoleLevel(t string) string {
	switch t {
	case "error", "assert":
		return "error"
	case "warning", "warn":
		return "warning"
	case "debug", "verbose", "trace":
		return "debug"
	case "info":
		return "info"
	}
	return "log"
}

// remoteText is how a console argument reads: a string as itself, other
// primitives as JSON, objects by their description.
func remoteText(o *proto.RuntimeRemoteObject) string {
	switch {
	case o == nil:
		return ""
	case o.Type == proto.RuntimeRemoteObjectTypeString:
		return o.Value.Str()
	case o.UnserializableValue != "":
		return string(o.UnserializableValue)
	case o.Description != "":
		return o.Description
	case o.Type == proto.RuntimeRemoteObjectTypeUndefined:
		return "undefined"
	}
	b, err := json.Marshal(o.Value)
	if err != nil {
		return string(o.Type)
	}
	return string(b)
}
