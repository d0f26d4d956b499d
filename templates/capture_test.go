package templates

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"testing"
	"time"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
)

// runTemplate validates env's inputs like the engine does, then runs tpl.
func runTemplate(t *testing.T, tpl engine.Template, env *fakeEnv) (*engine.Outcome, error) {
	t.Helper()
	s, err := engine.CompileSchema(tpl.Info().InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	if verr := s.Validate(env.inputs, "inputs"); verr != nil {
		t.Fatalf("inputs rejected by the schema: %v", verr)
	}
	if err := tpl.Check(env.inputs, env.profile); err != nil {
		t.Fatalf("Check: %v", err)
	}
	// No time bound of its own: how long a run takes is not what these
	// tests promise (a 2 000-page crawl under -race on a loaded machine
	// took more than a fixed minute). A hang still ends, shortly before
	// the test binary's -timeout, with the run's own error.
	ctx := t.Context()
	if d, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, d.Add(-30*time.Second))
		defer cancel()
	}
	return tpl.Run(ctx, env)
}

// resultOf re-decodes an outcome's result as JSON.
func resultOf(t *testing.T, out *engine.Outcome) map[string]any {
	t.Helper()
	b, err := json.Marshal(out.Result)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestScreenshotPagesPNGAndJPEG(t *testing.T) {
	srv := fixture.New(t)
	m := testManager(t)
	env := newEnv(t, mustJSON(t, map[string]any{
		"urls":     []string{srv.URL("/page/1"), srv.URL("/status/404")},
		"viewport": map[string]int{"width": 800, "height": 600},
	}))
	out, err := runTemplate(t, NewScreenshotPages(m), env)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Partial {
		t.Fatal("a 404 must make the run partial")
	}
	res := resultOf(t, out)
	shots := res["screenshots"].([]any)
	first, second := shots[0].(map[string]any), shots[1].(map[string]any)
	if first["artifactId"] != "art_127.0.0.1-page-1.png" || first["mimeType"] != "image/png" || first["error"] != nil {
		t.Fatalf("first screenshot: %v", first)
	}
	if second["artifactId"] != "" || second["error"].(map[string]any)["errorCode"] != "STEP_EXECUTION_FAILED" {
		t.Fatalf("404 screenshot: %v", second)
	}
	png, mime := env.artifact("127.0.0.1-page-1.png")
	if mime != "image/png" || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("not a PNG: %s %q", mime, png[:8])
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(png))
	if err != nil || format != "png" || cfg.Width != 800 || cfg.Height != 600 {
		t.Fatalf("PNG %s %dx%d %v, want png 800x600", format, cfg.Width, cfg.Height, err)
	}

	// JPEG of the whole (3000+ px tall) form page, default viewport width.
	env = newEnv(t, mustJSON(t, map[string]any{"urls": []string{srv.URL("/form")}, "format": "jpeg", "quality": 60, "fullPage": true}))
	if _, err := runTemplate(t, NewScreenshotPages(m), env); err != nil {
		t.Fatal(err)
	}
	jpg, mime := env.artifact("127.0.0.1-form.jpg")
	cfg, format, err = image.DecodeConfig(bytes.NewReader(jpg))
	if mime != "image/jpeg" || !bytes.HasPrefix(jpg, []byte{0xFF, 0xD8, 0xFF}) || err != nil || format != "jpeg" ||
		cfg.Width < 1200 || cfg.Width > 1280 || cfg.Height < 3000 {
		t.Fatalf("JPEG %s %s %dx%d %v, want jpeg ~1280 (content width) x >=3000", mime, format, cfg.Width, cfg.Height, err)
	}
}

func TestSavePDF(t *testing.T) {
	srv := fixture.New(t)
	env := newEnv(t, mustJSON(t, map[string]any{"urls": []string{srv.URL("/page/1"), srv.URL("/page/2")}, "paper": "a4", "landscape": true}))
	out, err := runTemplate(t, NewSavePDF(testManager(t)), env)
	if err != nil {
		t.Fatal(err)
	}
	res := resultOf(t, out)
	if s := res["summary"].(map[string]any); s["succeeded"] != 2.0 || out.Partial {
		t.Fatalf("summary %v", s)
	}
	for _, name := range []string{"127.0.0.1-page-1.pdf", "127.0.0.1-page-2.pdf"} {
		doc, mime := env.artifact(name)
		if mime != "application/pdf" || !bytes.HasPrefix(doc, []byte("%PDF-")) || !bytes.Contains(doc[len(doc)-32:], []byte("%%EOF")) {
			t.Fatalf("%s is not a PDF (%s, %d bytes)", name, mime, len(doc))
		}
	}
}
