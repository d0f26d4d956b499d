package templates

import (
	"context"
	"sync"

	"github.com/browsertask/browsertask/browser"
)

// lazyTabs hands out the tabs of a run whose pages need the browser only
// now and then (render "auto"): the session is opened on the first
// take, a tab taken when no idle one is left, and tabs go back to the
// idle list after their page (closed instead after a crash or when they
// stopped answering). At most as many tabs are open as pages render at
// once, so never more than the run's workers.
type lazyTabs struct {
	// ctx is the run's: tabs are taken for its whole length.
	ctx   context.Context
	open  func() (*browser.Session, error)
	setup func(ctx context.Context, tb *browser.Tab) error

	mu   sync.Mutex
	sess *browser.Session
	idle []*browser.Tab
	// waiting cancels the acquisitions under way when a tab goes idle:
	// with a capacity on the browsers (--browser …,capacity=N) the idle
	// tabs may be what the acquisition waits for, and the taker takes
	// one of them instead of waiting for good.
	waiting map[*int]context.CancelFunc
	// held are the contexts of the tabs acquired (acquire), cancelled
	// when the run's tabs are closed.
	held []context.CancelFunc
}

// take returns an idle tab or a new one (opening the session first when
// needed). Errors: the session cannot be opened, a tab cannot be taken or
// set up (fatal for the run unless ctx ended).
func (l *lazyTabs) take(ctx context.Context) (*browser.Tab, error) {
	l.mu.Lock()
	if n := len(l.idle); n > 0 {
		tb := l.idle[n-1]
		l.idle = l.idle[:n-1]
		l.mu.Unlock()
		return tb, nil
	}
	if l.sess == nil {
		s, err := l.open()
		if err != nil {
			l.mu.Unlock()
			return nil, err
		}
		s.Spread() // with several --browser endpoints, pages go to all (urlPool.run)
		l.sess = s
	}
	sess := l.sess
	l.mu.Unlock()
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	tb, err := l.acquire(sess)
	if err != nil {
		return nil, stopErr(ctx, err)
	}
	if tb == nil {
		return l.take(ctx) // a tab went idle meanwhile
	}
	if l.setup != nil {
		if err := l.setup(ctx, tb); err != nil {
			tb.Release(false)
			return nil, err
		}
	}
	return tb, nil
}

// acquire takes a new tab of sess, or returns nil, nil when a tab went
// idle while it waited.
//
// A tab stops loading when the context it was acquired with ends
// (Session.AcquireTab), so the cancellable context of the wait must live
// as long as the tab: it is cancelled only while the acquisition is
// still waiting (put), and otherwise kept until the run ends (close). A
// cancel that lands just as a tab was handed out makes that tab unusable:
// it is closed and the taker takes the idle one.
func (l *lazyTabs) acquire(sess *browser.Session) (*browser.Tab, error) {
	actx, cancel := context.WithCancel(l.ctx)
	key := new(int)
	l.mu.Lock()
	if len(l.idle) > 0 {
		l.mu.Unlock()
		cancel()
		return nil, nil
	}
	if l.waiting == nil {
		l.waiting = map[*int]context.CancelFunc{}
	}
	l.waiting[key] = cancel
	l.mu.Unlock()
	tb, err := sess.AcquireTab(actx)
	l.mu.Lock()
	delete(l.waiting, key)
	if err == nil && actx.Err() == nil {
		l.held = append(l.held, cancel)
		l.mu.Unlock()
		return tb, nil
	}
	l.mu.Unlock()
	cancel()
	if err == nil {
		// Cancelled by put as the tab came: the tab's stop already fired.
		tb.Release(false)
		if l.ctx.Err() != nil {
			return nil, context.Cause(l.ctx)
		}
		return nil, nil
	}
	if l.ctx.Err() == nil && actx.Err() != nil {
		return nil, nil
	}
	return nil, err
}

// put gives a tab back after its page; failed says the page failed (the
// tab is then checked before it is reused).
func (l *lazyTabs) put(tb *browser.Tab, failed bool) {
	if tb.Crashed() || (failed && !tb.Healthy()) {
		tb.Release(false)
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.idle = append(l.idle, tb)
	for _, cancel := range l.waiting {
		cancel()
	}
}

// failOver releases tb and reports true when its browser stopped answering
// and another browser of the pool is up (Session.FailOver): the page it
// was reading is then read again in a new tab.
func (l *lazyTabs) failOver(tb *browser.Tab) bool {
	l.mu.Lock()
	sess := l.sess
	l.mu.Unlock()
	if sess == nil || !sess.FailOver(tb) {
		return false
	}
	tb.Release(false)
	return true
}

// close releases the idle tabs (at the end of the run).
func (l *lazyTabs) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, tb := range l.idle {
		tb.Release(true)
	}
	l.idle = nil
	for _, cancel := range l.held {
		cancel()
	}
	l.held = nil
}
