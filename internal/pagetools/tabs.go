package pagetools

import (
	"context"
	"slices"
	"strconv"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/internal/snapshot"
)

// pageTab is one tab of a session's interactive page: a tab the tools
// opened, or a popup one of them opened (a target=_blank link,
// window.open), adopted when a call first sees it. Its id ("t1", "t2", …)
// never changes and is never given again in the session, so a model's
// "switch to t2" cannot land on another tab.
type pageTab struct {
	id      string
	tab     *browser.Tab
	refs    *snapshot.Refs
	console *consoleLog
	// stop ends its console watch.
	stop context.CancelFunc
	// gone ends when its page closed or crashed: a CDP call to a page
	// that closed under it (window.close) is never answered, so every
	// call on the tab is bound to it.
	gone     context.Context
	markGone context.CancelFunc
	// used orders the tabs by when each was last the current one: a
	// closed current tab falls back to the one used most recently.
	used uint64
}

// tabSet is the tabs of one session's page, guarded by page.mu.
type tabSet struct {
	all   []*pageTab
	cur   *pageTab
	n     int
	clock uint64
}

// add registers tb as a new tab of p (not current), shows it in the
// session's live view under its id and starts reading its console.
func (p *page) add(tb *browser.Tab) *pageTab {
	p.set.n++
	ctx, stop := context.WithCancel(context.Background())
	pt := &pageTab{id: "t" + strconv.Itoa(p.set.n), tab: tb, refs: snapshot.NewRefs(), console: newConsoleLog(&p.seq), stop: stop}
	tb.ShowLive(p.id, pt.id)
	pt.gone, pt.markGone = context.WithCancel(context.Background())
	p.set.all = append(p.set.all, pt)
	watchConsole(ctx, tb.Page(), pt.console, pt.markGone)
	return pt
}

// bound returns ctx, also ended when the current tab's page closes or
// crashes, for the call's work on it.
func (p *page) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(ctx)
	if p.set.cur == nil {
		return c, cancel
	}
	stop := context.AfterFunc(p.set.cur.gone, cancel)
	return c, func() { stop(); cancel() }
}

// use makes pt the tab the tools act on.
func (p *page) use(pt *pageTab) {
	p.set.clock++
	pt.used = p.set.clock
	p.set.cur = pt
	p.tab, p.refs = pt.tab, pt.refs
}

// remove forgets pt, closing its tab, and, when it was the current one,
// falls back to the tab used most recently; with none left the page has
// no tab and the next call opens a blank one.
func (p *page) remove(pt *pageTab) {
	pt.stop()
	pt.markGone()
	pt.tab.Release(false)
	p.set.all = slices.DeleteFunc(p.set.all, func(o *pageTab) bool { return o == pt })
	if p.set.cur != pt {
		return
	}
	p.set.cur, p.tab, p.refs = nil, nil, snapshot.NewRefs()
	var best *pageTab
	for _, o := range p.set.all {
		if best == nil || o.used > best.used {
			best = o
		}
	}
	if best != nil {
		p.use(best)
	}
}

// byID returns the tab with id, or nil.
func (p *page) byID(id string) *pageTab {
	for _, pt := range p.set.all {
		if pt.id == id {
			return pt
		}
	}
	return nil
}

// sync brings the tab list up to date with the browser: a tab whose page
// is gone (closed by a script, crashed away) is forgotten, and a popup a
// tab of the list opened becomes a tab of the list (not the current one:
// the model switches to it when it wants; the answer names it). It returns
// what changed, as lines for the answer. A failure to list the browser's
// targets changes nothing: the call goes on with the tabs it knows.
func (p *page) sync(ctx context.Context, s *browser.Session) []string {
	if len(p.set.all) == 0 || s == nil {
		return nil
	}
	targets, err := p.set.all[0].tab.PageTargets(ctx)
	if err != nil {
		return nil
	}
	alive := map[string]bool{}
	for _, tg := range targets {
		alive[string(tg.ID)] = true
	}
	var notes []string
	for _, pt := range slices.Clone(p.set.all) {
		if !alive[string(pt.tab.TargetID())] {
			notes = append(notes, "tab "+pt.id+" was closed by the page")
			p.remove(pt)
		}
	}
	// A popup's opener may itself be a popup adopted a moment ago: read
	// the list until it adds nothing.
	tried := map[string]bool{}
	for grew := true; grew; {
		grew = false
		for _, tg := range targets {
			if tried[string(tg.ID)] || p.known(string(tg.ID)) || tg.Opener == "" || !p.known(string(tg.Opener)) {
				continue
			}
			tried[string(tg.ID)] = true
			opener := p.byTarget(string(tg.Opener))
			tb, err := s.AdoptPopup(context.WithoutCancel(ctx), opener.tab, tg.ID)
			if err != nil {
				notes = append(notes, "a popup of tab "+opener.id+" ("+tg.URL+") was not adopted: "+err.Error())
				continue
			}
			pt := p.add(tb)
			notes = append(notes, "tab "+pt.id+" opened by tab "+opener.id+": "+tg.URL)
			grew = true
		}
	}
	if p.set.cur == nil && len(p.set.all) > 0 {
		p.use(p.set.all[len(p.set.all)-1])
	}
	return notes
}

// known reports whether target is one of the page's tabs.
func (p *page) known(target string) bool { return p.byTarget(target) != nil }

// byTarget returns the tab whose page target is target, or nil.
func (p *page) byTarget(target string) *pageTab {
	for _, pt := range p.set.all {
		if string(pt.tab.TargetID()) == target {
			return pt
		}
	}
	return nil
}

// closedUnder answers a call that failed because its tab closed under it
// (a button whose script runs window.close()): the call did what it was
// asked, the tools fall back to the tab used most recently, and the answer
// says so with the tab list. It reports false when the current tab is
// still open: the failure is the call's own.
func (p *page) closedUnder(ctx context.Context) (*sdk.CallToolResult, bool) {
	cur := p.set.cur
	if cur == nil {
		return nil, false
	}
	notes := p.sync(ctx, p.sess)
	if p.set.cur == cur {
		return nil, false
	}
	p.notes = append(p.notes, notes...)
	return p.tabList(ctx, map[string]any{"done": "tab " + cur.id + " closed"}), true
}
