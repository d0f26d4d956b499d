package browser

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/browsertask/browsertask/internal/fixture"
)

// cutProxy forwards TCP connections to a browser's DevTools port; down
// closes the listener and every connection (the endpoint stops answering,
// as a browser farm's host going away would) and up listens again on the
// same address.
type cutProxy struct {
	t      *testing.T
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]bool
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	p := &cutProxy{t: t, target: target, addr: "127.0.0.1:0", conns: map[net.Conn]bool{}}
	p.up()
	p.addr = p.ln.Addr().String()
	t.Cleanup(p.down)
	return p
}

func (p *cutProxy) up() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", p.target)
			if err != nil {
				_ = c.Close()
				continue
			}
			p.mu.Lock()
			p.conns[c], p.conns[b] = true, true
			p.mu.Unlock()
			go func() { _, _ = io.Copy(b, c); _ = b.Close() }()
			go func() { _, _ = io.Copy(c, b); _ = c.Close() }()
		}
	}()
}

func (p *cutProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	_ = p.ln.Close()
	for c := range p.conns {
		_ = c.Close()
	}
	p.conns = map[net.Conn]bool{}
}

// TestPoolCapacityFailoverAndReturn: two endpoints (capacity 1 through a
// proxy that can be cut, capacity 2 direct) serve a spread session: three
// tabs fill both, a fourth waits for room and gets the tab freed; when the
// first endpoint's connection is cut it is taken out of the pool, its tab
// fails and FailOver says to move the page; new tabs go to the other
// endpoint; once the proxy listens again the endpoint is back in the pool
// and gets tabs again.
func TestPoolCapacityFailoverAndReturn(t *testing.T) {
	srv := fixture.New(t)
	c := fixture.StartRemoteChromium(t)
	px := newCutProxy(t, strings.TrimPrefix(c.HTTP, "http://"))
	// A third endpoint that nothing answers on, with the most room: the
	// session tried there first goes to another one, and it is out.
	dead, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_ = dead.Close()
	m := newManager(t, Options{Browser: []string{"http://" + px.addr, "capacity=1", c.WS, "capacity=2",
		"http://" + dead.Addr().String(), "capacity=5"}})
	ctx := testCtx(t)
	var s *Session
	s, err = m.Session(ctx, "sess_pool")
	if err != nil {
		t.Fatal(err)
	}
	if !m.Capacity()[2].Down {
		t.Fatal("the endpoint nothing answers on is not down after the session went elsewhere")
	}
	s.Spread()
	inUse := func(a, b int) func() bool {
		return func() bool { l := m.Capacity(); return l[0].InUse == a && l[1].InUse == b }
	}
	var tabs []*Tab
	for range 3 {
		tb, err := s.AcquireTab(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if r, err := tb.Navigate(ctx, srv.URL("/page/1"), WaitLoad); err != nil || r.Status != 200 {
			t.Fatalf("navigate: %+v %v", r, err)
		}
		tabs = append(tabs, tb)
	}
	if l := m.Capacity(); l[0].InUse != 1 || l[1].InUse != 2 || l[0].Capacity != 1 || l[1].Capacity != 2 {
		t.Fatalf("three tabs over capacities 1 and 2: %+v, want both full", l)
	}
	var onA, onB []*Tab
	for _, tb := range tabs {
		if tb.s.in == m.instances[0] {
			onA = append(onA, tb)
		} else {
			onB = append(onB, tb)
		}
	}
	if len(onA) != 1 || len(onB) != 2 {
		t.Fatalf("tabs on A %d, on B %d; want 1 and 2", len(onA), len(onB))
	}

	// A fourth tab waits until one is freed.
	got := make(chan *Tab, 1)
	go func() {
		tb, err := s.AcquireTab(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- tb
	}()
	select {
	case <-got:
		t.Fatal("a fourth tab was handed out while every endpoint was full")
	default:
	}
	onB[0].Release(true)
	fourth := <-got
	if fourth == nil || fourth.s.in != m.instances[1] {
		t.Fatal("the fourth tab did not take the room freed on B")
	}
	onB[0] = fourth

	// Cut A: it is taken out of the pool and its tab's page moves.
	px.down()
	fixture.WaitUntil(t, "A to be taken out of the pool", func() bool { return m.Capacity()[0].Down })
	if _, err := onA[0].Navigate(ctx, srv.URL("/page/2"), WaitLoad); err == nil {
		t.Fatal("navigating a tab of the cut endpoint succeeded")
	}
	if !s.FailOver(onA[0]) {
		t.Fatal("FailOver on the cut endpoint's tab = false, want true (B is up)")
	}
	onA[0].Release(false)
	onB[1].Release(true)
	fixture.WaitUntil(t, "the released tabs to be uncounted", inUse(0, 1))
	tb, err := s.AcquireTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if tb.s.in != m.instances[1] {
		t.Fatal("a tab went to the endpoint that is down")
	}
	if s.FailOver(tb) {
		t.Fatal("FailOver on a tab of a live endpoint = true")
	}

	// A answers again: back in the pool, and B being full it gets the next tab.
	px.up()
	fixture.WaitUntil(t, "A to be back in the pool", func() bool { return !m.Capacity()[0].Down })
	back, err := s.AcquireTab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if back.s.in != m.instances[0] {
		t.Fatal("with B full, the next tab did not go to A once it was back")
	}
	if r, err := back.Navigate(ctx, srv.URL("/page/3"), WaitLoad); err != nil || r.Status != 200 {
		t.Fatalf("navigate on A after its return: %+v %v", r, err)
	}
	for _, x := range []*Tab{back, tb, onB[0]} {
		x.Release(true)
	}
}
