package pagetools

import (
	"context"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsertask/browsertask/engine"
)

// pageScrolls are the directions of a page scroll (browser_act scroll
// without ref) and the script each runs: a screenful is 85 % of the
// viewport, so a line of the last one stays in sight.
var pageScrolls = map[string]string{
	"down":   `window.scrollBy({top: innerHeight * 0.85, behavior: 'instant'})`,
	"up":     `window.scrollBy({top: -innerHeight * 0.85, behavior: 'instant'})`,
	"top":    `window.scrollTo({top: 0, behavior: 'instant'})`,
	"bottom": `window.scrollTo({top: document.scrollingElement.scrollHeight, behavior: 'instant'})`,
}

// scrollPage scrolls the current tab's page (value down, the default, up,
// top or bottom) and answers what changed: pages that load more as they
// scroll show it in the answer or the next snapshot. Errors:
// INVALID_PARAMETER naming value.
func (t *Tools) scrollPage(ctx context.Context, p *page, a *args) (*sdk.CallToolResult, error) {
	dir := strings.TrimSpace(strings.ToLower(a.Value))
	if dir == "" {
		dir = "down"
	}
	js, ok := pageScrolls[dir]
	if !ok {
		return nil, &engine.Error{Code: engine.InvalidParameter, Message: fmt.Sprintf("value: %q is not a scroll direction", a.Value),
			Recovery: "use down, up, top or bottom, or pass ref to scroll an element into view", Details: map[string]any{"field": "value"}}
	}
	if _, err := p.tab.Eval(ctx, js+"; scrollY"); err != nil {
		return nil, err
	}
	a.ChangedOnly = true
	return t.snapshotAnswer(ctx, p, a, map[string]any{"done": "scroll page " + dir})
}
