package pagetools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsertask/browsertask/engine"
)

// tabActions are browser_tabs' actions.
var tabActions = []string{"list", "open", "switch", "close"}

// tabTools are browser_tabs and browser_console.
func (t *Tools) tabTools() []tool {
	str := func(d string) map[string]any { return map[string]any{"type": "string", "description": d} }
	tabList := map[string]any{"type": "array", "description": "The session's tabs in the order they opened.", "items": map[string]any{"type": "object",
		"properties": map[string]any{"tab": str("Its id, such as t2."), "url": str("Its address."), "title": str("Its title."), "current": map[string]any{"type": "boolean"}}}}
	return []tool{
		{name: "browser_tabs", description: "Lists, opens, switches and closes the session's tabs; the other browser_ tools act on the current tab. " +
			"Popups the page opens (a target=_blank link, window.open) are listed as tabs of their own (answers say when one opened) " +
			"and become current only when switched to. open loads url (held to the URL policy like browser_navigate) in a new tab and makes it current; " +
			"close closes tab (default the current one) and falls back to the tab used most recently. " +
			"Errors: INVALID_PARAMETER (action, tab or url), URL_NOT_ALLOWED, TRUST_LEVEL_NOT_ALLOWED, NAVIGATION_TIMEOUT.",
			props: map[string]any{
				"action": map[string]any{"type": "string", "enum": tabActions, "description": "What to do (default list)."},
				"url":    str("For open: the URL to load (none: a blank tab)."),
				"tab":    str("For switch and close: the tab's id from list, such as t2."),
			},
			output: map[string]any{"tabs": tabList, "current": str("The current tab's id (absent when none is open).")},
			run:    t.tabs},
		{name: "browser_console", readOnly: true, description: "Reads the console messages and uncaught errors of the session's current tab: " +
			"by default the ones since the last browser_console call on that tab, or those after since (a seq a message carried). " +
			"Each has seq, level (log, info, debug, warning, error, exception), text (cut at 1000 characters), url and line. " +
			"A tab keeps its latest 500 messages; one answer holds at most limit (default 50, at most 200), oldest first, and says when more remain.",
			props: map[string]any{
				"since": map[string]any{"type": "integer", "minimum": 0, "description": "Answer the messages with a greater seq (0: all kept)."},
				"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": consoleMaxAnswer, "description": "At most this many messages (default 50)."},
				"level": map[string]any{"type": "string", "enum": []string{"all", "warning", "error"}, "description": "Only messages at least this serious (default all)."},
			},
			output: map[string]any{"messages": map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
				"next": map[string]any{"type": "integer", "description": "The last seq answered: pass it as since to read on."},
				"more": map[string]any{"type": "boolean", "description": "More messages remain after this answer."},
				"lost": map[string]any{"type": "integer", "description": "Messages after since the tab let go before they were read."},
				"tab":  str("The tab read.")},
			run: t.console},
	}
}

// tabs is browser_tabs.
func (t *Tools) tabs(ctx context.Context, p *page, a *args) (*sdk.CallToolResult, error) {
	switch a.Action {
	case "", "list":
		return p.tabList(ctx, map[string]any{}), nil
	case "open":
		if strings.TrimSpace(a.URL) != "" {
			if err := t.checkURL(a.URL); err != nil {
				return nil, err
			}
		}
		tb, err := p.sess.AcquireTab(context.WithoutCancel(ctx))
		if err != nil {
			return nil, err
		}
		pt := p.add(tb)
		p.use(pt)
		extra := map[string]any{}
		if strings.TrimSpace(a.URL) != "" {
			nav, err := tb.Navigate(ctx, a.URL, "load")
			if err != nil {
				return nil, err
			}
			extra["status"], extra["url"] = nav.Status, nav.FinalURL
		}
		return t.withTabs(ctx, p, a, extra)
	case "switch":
		pt, err := p.tabArg(a.Tab, true)
		if err != nil {
			return nil, err
		}
		p.use(pt)
		return t.withTabs(ctx, p, a, map[string]any{})
	case "close":
		pt, err := p.tabArg(a.Tab, false)
		if err != nil {
			return nil, err
		}
		p.remove(pt)
		if p.set.cur == nil {
			return p.tabList(ctx, map[string]any{}), nil
		}
		return t.withTabs(ctx, p, a, map[string]any{})
	}
	return nil, &engine.Error{Code: engine.InvalidParameter, Message: fmt.Sprintf("action: %q is not a tabs action", a.Action),
		Recovery: "use one of " + strings.Join(tabActions, ", "), Details: map[string]any{"field": "action"}}
}

// tabArg returns the tab a names ("" is the current one unless required).
// Errors: INVALID_PARAMETER naming tab.
func (p *page) tabArg(id string, required bool) (*pageTab, error) {
	id = strings.TrimSpace(id)
	if id == "" && !required && p.set.cur != nil {
		return p.set.cur, nil
	}
	if pt := p.byID(id); pt != nil {
		return pt, nil
	}
	ids := make([]string, 0, len(p.set.all))
	for _, pt := range p.set.all {
		ids = append(ids, pt.id)
	}
	msg := fmt.Sprintf("tab: %q is not an open tab of this session", id)
	if id == "" {
		msg = "tab is required: the id of the tab"
	}
	return nil, &engine.Error{Code: engine.InvalidParameter, Message: msg,
		Recovery: "use one of the open tabs (" + strings.Join(ids, ", ") + "), as browser_tabs list shows", Details: map[string]any{"field": "tab"}}
}

// withTabs answers the current tab's snapshot after the tab list.
func (t *Tools) withTabs(ctx context.Context, p *page, a *args, extra map[string]any) (*sdk.CallToolResult, error) {
	list := p.tabList(ctx, map[string]any{})
	res, err := t.snapshotAnswer(ctx, p, a, extra)
	if err != nil {
		return nil, err
	}
	var sc map[string]any
	_ = json.Unmarshal(list.StructuredContent.(json.RawMessage), &sc)
	extra["tabs"], extra["current"] = sc["tabs"], sc["current"]
	b, _ := json.Marshal(extra)
	res.StructuredContent = json.RawMessage(b)
	res.Content = append(list.Content, res.Content...)
	return res, nil
}

// tabList answers the tabs with their addresses and titles, extra added to
// the structured content.
func (p *page) tabList(ctx context.Context, extra map[string]any) *sdk.CallToolResult {
	info := map[string][2]string{}
	if len(p.set.all) > 0 {
		if targets, err := p.set.all[0].tab.PageTargets(ctx); err == nil {
			for _, tg := range targets {
				info[string(tg.ID)] = [2]string{tg.URL, tg.Title}
			}
		}
	}
	var b strings.Builder
	list := []map[string]any{}
	for _, pt := range p.set.all {
		in := info[string(pt.tab.TargetID())]
		mark := " "
		if pt == p.set.cur {
			mark = "*"
		}
		fmt.Fprintf(&b, "%s %s %q %s\n", mark, pt.id, in[1], in[0])
		list = append(list, map[string]any{"tab": pt.id, "url": in[0], "title": in[1], "current": pt == p.set.cur})
	}
	head := fmt.Sprintf("tabs: %d", len(list))
	if p.set.cur != nil {
		head += " (current " + p.set.cur.id + ")"
		extra["current"] = p.set.cur.id
	} else {
		head += " (none open: the next call opens a blank tab)"
	}
	extra["tabs"] = list
	sc, _ := json.Marshal(extra)
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: head + "\n" + b.String()}}, StructuredContent: json.RawMessage(sc)}
}

// withNotes adds what the call's tab syncs saw (a popup opened, a tab
// closed) to its answer as a text block of its own.
func withNotes(res *sdk.CallToolResult, p *page) *sdk.CallToolResult {
	if len(p.notes) > 0 {
		res.Content = append(res.Content, &sdk.TextContent{Text: "tabs: " + strings.Join(p.notes, "; ") + " (browser_tabs lists them)"})
	}
	return res
}
