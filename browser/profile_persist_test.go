package browser

import (
	"log/slog"
	"testing"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/internal/fixture"
)

// TestProfileInstanceKeepsCookies: a persistent cookie set in a browser
// launched on a kept user-data directory is there again after the browser
// quit cleanly (closeGracefully) and a new one launched on the directory.
func TestProfileInstanceKeepsCookies(t *testing.T) {
	fixture.NeedChromium(t)
	dir := t.TempDir()
	ctx, cancel := fixture.Context(t)
	defer cancel()
	launch := func() *instance {
		return &instance{tempDir: t.TempDir(), userDataDir: dir, log: slog.New(slog.DiscardHandler)}
	}
	in := launch()
	b, _, err := in.browser(ctx)
	if err != nil {
		t.Fatal(err)
	}
	exp := proto.TimeSinceEpoch(time.Now().Add(time.Hour).Unix())
	if err := (proto.StorageSetCookies{Cookies: []*proto.NetworkCookieParam{{Name: "sid", Value: "v1", Domain: "127.0.0.1", Path: "/", Expires: exp}}}).Call(b.Context(ctx)); err != nil {
		t.Fatal(err)
	}
	in.closeGracefully()
	in = launch()
	defer in.close()
	if _, _, err := in.browser(ctx); err != nil {
		t.Fatal(err)
	}
	if got := in.cookieDomains(); len(got) != 1 || got[0] != "127.0.0.1" {
		t.Fatalf("cookies after a relaunch: %v, want the one of 127.0.0.1", got)
	}
}
