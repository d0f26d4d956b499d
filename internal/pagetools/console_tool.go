package pagetools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsertask/browsertask/engine"
)

// console is browser_console: the current tab's messages after since (by
// default after the last ones this tool answered for the tab).
func (t *Tools) console(_ context.Context, p *page, a *args) (*sdk.CallToolResult, error) {
	limit := consoleDefault
	if a.Limit != 0 {
		if a.Limit < 1 || a.Limit > consoleMaxAnswer {
			return nil, engine.Errorf(engine.InvalidParameter, "limit must be from 1 to %d", consoleMaxAnswer).WithDetails(map[string]any{"field": "limit"})
		}
		limit = a.Limit
	}
	rank := map[string]int{"": 0, "all": 0, "warning": 1, "error": 2}
	least, ok := rank[a.Level]
	if !ok {
		return nil, &engine.Error{Code: engine.InvalidParameter, Message: fmt.Sprintf("level: %q is not a level", a.Level),
			Recovery: "use all, warning or error", Details: map[string]any{"field": "level"}}
	}
	cl := p.set.cur.console
	since := cl.read
	if a.Since != nil {
		if *a.Since < 0 {
			return nil, engine.Errorf(engine.InvalidParameter, "since must be 0 or more").WithDetails(map[string]any{"field": "since"})
		}
		since = *a.Since
	}
	serious := map[string]int{"warning": 1, "error": 2, "exception": 2}
	var out []consoleMsg
	next, more, lost := since, false, 0
	for len(out) < limit {
		batch, l, m := cl.after(next, limit-len(out))
		if next == since {
			lost = l
		}
		for _, msg := range batch {
			if serious[msg.Level] >= least {
				out = append(out, msg)
			}
			next = msg.Seq
		}
		if more = m; !m || len(batch) == 0 {
			break
		}
	}
	cl.read = max(cl.read, next)
	var b strings.Builder
	fmt.Fprintf(&b, "console of tab %s: %d messages after seq %d\n", p.set.cur.id, len(out), since)
	if lost > 0 {
		fmt.Fprintf(&b, "(%d older messages were let go before they were read)\n", lost)
	}
	for _, m := range out {
		where := ""
		if m.URL != "" {
			where = fmt.Sprintf(" (%s:%d)", m.URL, m.Line)
		}
		fmt.Fprintf(&b, "%d %s: %s%s\n", m.Seq, m.Level, m.Text, where)
	}
	if more {
		fmt.Fprintf(&b, "… more messages: call again with since=%d\n", next)
	}
	if out == nil {
		out = []consoleMsg{}
	}
	sc, _ := json.Marshal(map[string]any{"messages": out, "next": next, "more": more, "lost": lost, "tab": p.set.cur.id})
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: b.String()}}, StructuredContent: json.RawMessage(sc)}, nil
}
