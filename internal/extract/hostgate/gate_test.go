package hostgate

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// TestAcquireHoldsPerHostLimit: 8 workers on one host never have more than
// PerHost slots at once, and another host is not held up by the first.
func TestAcquireHoldsPerHostLimit(t *testing.T) {
	g := New(Options{PerHost: 2})
	var (
		mu           sync.Mutex
		inFlight, hi int
		wg           sync.WaitGroup
	)
	gate, entered := make(chan struct{}), make(chan struct{}, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rel, err := g.Acquire(context.Background(), "a.test")
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			inFlight++
			hi = max(hi, inFlight)
			mu.Unlock()
			entered <- struct{}{}
			<-gate
			mu.Lock()
			inFlight--
			mu.Unlock()
			rel()
			rel() // a second call frees nothing more
		}()
	}
	// Another host gets its slot while a.test is full.
	rel, err := g.Acquire(context.Background(), "b.test")
	if err != nil {
		t.Fatal(err)
	}
	rel()
	<-entered
	<-entered // two are in: the others wait for a slot
	close(gate)
	wg.Wait()
	if hi != 2 {
		t.Fatalf("at most %d requests were in flight, want exactly 2", hi)
	}
}

// TestAcquireSpacesStartsAndBacksOff: with MinDelay 1 s the second start
// waits 1 s; SetMinDelay raises it (largest wins); Backoff doubles the
// spacing, Relax halves it and then drops it; a canceled wait returns the
// cause and holds nothing.
func TestAcquireSpacesStartsAndBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := New(Options{PerHost: 4, MinDelay: time.Second})
		start := time.Now()
		for i := range 3 {
			rel, err := g.Acquire(context.Background(), "h")
			if err != nil {
				t.Fatal(err)
			}
			rel()
			if got, want := time.Since(start), time.Duration(i)*time.Second; got != want {
				t.Fatalf("start %d at %v, want %v", i, got, want)
			}
		}
		g.SetMinDelay("h", 3*time.Second)
		g.SetMinDelay("h", 2*time.Second)
		if s := g.Spacing("h"); s != 3*time.Second {
			t.Fatalf("spacing after SetMinDelay 3s then 2s = %v, want 3s", s)
		}
		g.Backoff("h")
		if s := g.Spacing("h"); s != 6*time.Second {
			t.Fatalf("spacing after a backoff = %v, want 6s", s)
		}
		g.Relax("h")
		if s := g.Spacing("h"); s != 3*time.Second {
			t.Fatalf("spacing after relaxing = %v, want the 3s minimum", s)
		}
		ctx, cancel := context.WithCancelCause(context.Background())
		cause := errors.New("stop")
		time.AfterFunc(time.Second, func() { cancel(cause) })
		if _, err := g.Acquire(ctx, "h"); !errors.Is(err, cause) {
			t.Fatalf("canceled Acquire = %v, want the cause", err)
		}
		g2 := New(Options{})
		g2.Backoff("x")
		if s := g2.Spacing("x"); s != backoffFloor {
			t.Fatalf("first backoff = %v, want %v", s, backoffFloor)
		}
		for range 20 {
			g2.Backoff("x")
		}
		if s := g2.Spacing("x"); s != DefaultMaxSpacing {
			t.Fatalf("backoff grew to %v, want the cap %v", s, DefaultMaxSpacing)
		}
	})
}
