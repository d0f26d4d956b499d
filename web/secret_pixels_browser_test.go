package web_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// shots are the two pictures a run leaves of a field it typed into: the
// screenshot step's PNG and the live view's last frame (a JPEG) shown on
// the finished run's page.
type shots struct {
	png, frame image.Image
}

// typedShots runs run_steps on the UTF-8 form: it types text into the
// field (secret or not), takes a screenshot, and waits at a confirm
// question while the test watches the live stream until a frame arrives
// (the frame is then the tab's last: nothing changes the page after it).
func (e *liveEnv) typedShots(fs *formSite, text string, secret bool) shots {
	e.t.Helper()
	id := e.submitSteps(map[string]any{"startUrl": fs.srv.URL + "/form/utf-8", "viewport": map[string]int{"width": 1000, "height": 240},
		"steps": []map[string]any{
			{"action": "type", "selector": "#pin", "text": text, "secret": secret},
			{"action": "screenshot", "name": "typed"},
			{"action": "confirm", "message": "Watched the field?"},
		}})
	e.waitQuestion(id, "step-2")
	e.streamUntil(id, "frame-", "data:image/jpeg;base64,")
	e.confirm(id, "step-2")
	run := e.waitRun(id)
	var res struct {
		Artifacts []struct {
			ArtifactID string `json:"artifactId"`
		} `json:"artifacts"`
	}
	if run.Status != engine.StatusSucceeded || json.Unmarshal(run.Result, &res) != nil || len(res.Artifacts) != 1 {
		e.t.Fatalf("run %s %+v %s", run.Status, run.Error, run.Result)
	}
	b, err := e.eng.ArtifactBytes(context.Background(), res.Artifacts[0].ArtifactID, 0, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	shot, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		e.t.Fatalf("screenshot: %v", err)
	}
	page := e.get("/runs/" + id)
	src := dataURL.FindString(page[strings.Index(page, `class="live-tab"`)+1:])
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(src, "data:image/jpeg;base64,"))
	if err != nil || !strings.HasPrefix(src, "data:image/jpeg;base64,") {
		e.t.Fatalf("the finished run's page shows no last frame (%v)", err)
	}
	frame, err := jpeg.Decode(bytes.NewReader(raw))
	if err != nil {
		e.t.Fatalf("last frame: %v", err)
	}
	return shots{png: shot, frame: frame}
}

// differing counts the pixels of a and b whose colours differ by more
// than tol in a channel (all of them when the sizes differ).
func differing(a, b image.Image, tol uint32) int {
	if a.Bounds() != b.Bounds() {
		return a.Bounds().Dx() * a.Bounds().Dy()
	}
	n := 0
	r := a.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			r1, g1, b1, _ := a.At(x, y).RGBA()
			r2, g2, b2, _ := b.At(x, y).RGBA()
			if absDiff(r1, r2)>>8 > tol || absDiff(g1, g2)>>8 > tol || absDiff(b1, b2)>>8 > tol {
				n++
			}
		}
	}
	return n
}

func absDiff(a, b uint32) uint32 {
	if a > b {
		return a - b
	}
	return b - a
}

// TestSecretFieldObscuredInPixels (issue 26, item 6; acceptance 6): a
// secret typed into a text field never shows in pixels. Two runs type two
// different secrets of the same length: their screenshots (PNG) are
// identical, and so are the last live frames kept on the finished runs'
// pages — the field shows discs, not the text. A third run types the
// first value as plain text: its pictures differ from the secret ones, so
// the comparison does see the text when it is there. Before the fix the
// secret's characters were drawn: the two secret runs' pictures differed.
func TestSecretFieldObscuredInPixels(t *testing.T) {
	e := newLiveEnv(t, "")
	fs := newFormSite(t)
	a := e.typedShots(fs, "UniqPin 4711+x", true)
	b := e.typedShots(fs, "Wm8# kQ2@zR5%v", true)
	plain := e.typedShots(fs, "UniqPin 4711+x", false)
	t.Logf("pixels differing from the secret's: screenshot %d, last frame %d (plain text); screenshot %d, last frame %d (other secret)",
		differing(a.png, plain.png, 0), differing(a.frame, plain.frame, 24), differing(a.png, b.png, 0), differing(a.frame, b.frame, 24))
	if n := differing(a.png, b.png, 0); n != 0 {
		t.Errorf("screenshots of two secrets differ in %d pixels: the field shows the text", n)
	}
	// JPEG frames of the same picture are the same; a little tolerance
	// all the same.
	if n := differing(a.frame, b.frame, 24); n != 0 {
		t.Errorf("last frames of two secrets differ in %d pixels: the field shows the text", n)
	}
	if n := differing(a.png, plain.png, 0); n < 200 {
		t.Errorf("the screenshot of plain text differs from a secret's in %d pixels only: the comparison sees no text", n)
	}
	if n := differing(a.frame, plain.frame, 24); n < 200 {
		t.Errorf("the last frame of plain text differs from a secret's in %d pixels only: the comparison sees no text", n)
	}
}
