package web_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/fixture"
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

// otpPage is a login page whose one-time-code step stays on the page: the
// password form goes away, a code field shows (large, no caret), and
// Confirm answers "Invalid code" half a second later, the field keeping
// its value — the case where the code stayed visible in the live view's
// last frame. The message sits below the viewport (the page does not
// scroll), so a frame looks the same before and after it.
const otpPage = `<!doctype html><html style="overflow:hidden"><head><title>Sign in</title></head><body style="margin:0">
<div id="app"><form id="pwform"><label for="u">Username</label><input id="u" name="username">
<label for="p">Password</label><input id="p" name="password" type="password"><button type="submit">Log in</button></form></div>
<script>
const app = document.getElementById('app'), pwform = document.getElementById('pwform');
pwform.addEventListener('submit', ev => {
  ev.preventDefault();
  pwform.remove();
  app.innerHTML = '<label for="tfa">Two-factor code</label><input id="tfa" type="text" autocomplete="one-time-code" spellcheck="false" ' +
    'style="font: 40px monospace; width: 600px; caret-color: transparent; outline: none; border: 2px solid #000">' +
    '<button type="button" id="tfa-submit">Confirm</button><p id="tfa-error" role="alert" style="position: absolute; top: 3000px"></p>';
  document.getElementById('tfa-submit').addEventListener('click', () => {
    setTimeout(() => { document.getElementById('tfa-error').textContent = 'Invalid code' }, 500);
  });
});
</script></body></html>`

// otpLastFrame runs login on otpPage, answers the one-time-code question
// with code while the test watches the live stream (from before the code
// is typed until the run ends), and returns the last frame the finished
// run's page shows.
func (e *liveEnv) otpLastFrame(site string, code string) image.Image {
	e.t.Helper()
	ctx, cancel := fixture.Context(e.t)
	defer cancel()
	sess, err := e.eng.CreateSession(ctx, engine.CreateSessionRequest{})
	if err != nil {
		e.t.Fatal(err)
	}
	in, _ := json.Marshal(map[string]any{"url": site, "username": "alice", "password": "pw-9f3k", "success": map[string]any{"selector": "#welcome"}})
	sub, err := e.eng.Submit(ctx, engine.SubmitRequest{TemplateID: "login", SessionID: sess.ID, Inputs: in, Mode: engine.ModeAsync, TimeoutMs: 120000})
	if err != nil {
		e.t.Fatal(err)
	}
	id := sub.Run.RunID
	e.waitQuestion(id, "otp")
	// The stream is read until the run ends; the code is typed once a
	// frame came (the tab is watched).
	watching := make(chan struct{})
	streamDone := make(chan error, 1)
	go func() { streamDone <- readStream(ctx, e.srv.URL+"/runs/"+id+"/live/stream", watching) }()
	select {
	case <-watching:
	case err := <-streamDone:
		e.t.Fatalf("the live stream ended before a frame: %v", err)
	}
	if _, err := e.eng.AnswerQuestion(ctx, id, "otp", engine.Answer{Value: &code}); err != nil {
		e.t.Fatal(err)
	}
	// The site rejects the code and login asks for another (its second
	// chance): the person declines, so the one code typed stays in the
	// field until the run ends.
	e.waitQuestion(id, "otp2")
	if _, err := e.eng.AnswerQuestionMCP(ctx, id, "otp2", json.RawMessage(`{"action":"decline"}`)); err != nil {
		e.t.Fatal(err)
	}
	run := e.waitRun(id)
	if run.Status != engine.StatusFailed || run.Error == nil || run.Error.Details["reason"] != "declined" {
		e.t.Fatalf("login: %s %+v, want failed with reason declined (after the rejected code)", run.Status, run.Error)
	}
	if err := <-streamDone; err != nil {
		e.t.Fatal(err)
	}
	page := e.get("/runs/" + id)
	i := strings.Index(page, `class="live-tab"`)
	if i < 0 {
		e.t.Fatalf("the finished login run's page shows no live tab")
	}
	src := dataURL.FindString(page[i:])
	raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(src, "data:image/jpeg;base64,"))
	if err != nil || src == "" {
		e.t.Fatalf("the finished login run's page shows no last frame (%v)", err)
	}
	img, err := jpeg.Decode(bytes.NewReader(raw))
	if err != nil {
		e.t.Fatalf("last frame: %v", err)
	}
	return img
}

// readStream reads a live stream until its "end" event, closing watching
// at the first frame event.
func readStream(ctx context.Context, url string, watching chan struct{}) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	framed := false
	for sc.Scan() {
		switch line := sc.Text(); {
		case line == "event: end":
			return nil
		case strings.HasPrefix(line, "event: frame-") && !framed:
			framed = true
			close(watching)
		}
	}
	return fmt.Errorf("the stream ended without an end event: %v", sc.Err())
}

// TestOneTimeCodeObscuredInLastFrame (issue 26, item 6): a one-time code
// typed by login into a text field that keeps it (the site rejected it on
// the same page) does not show in the live view's last frame on the
// finished run's page: two codes of the same length give the same frame;
// a code one digit longer gives another (one more disc), so the frame
// does show the field after the code was typed. Before the fix the digits
// were drawn and the two frames differed.
func TestOneTimeCodeObscuredInLastFrame(t *testing.T) {
	e := newLiveEnv(t, "")
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, otpPage)
	})
	site := httptest.NewServer(mux)
	defer site.Close()
	a := e.otpLastFrame(site.URL+"/login", "481516")
	b := e.otpLastFrame(site.URL+"/login", "902342")
	longer := e.otpLastFrame(site.URL+"/login", "9023427")
	t.Logf("last frame pixels differing from the first code's: other code %d, one digit more %d", differing(a, b, 24), differing(a, longer, 24))
	if n := differing(a, b, 24); n != 0 {
		t.Errorf("the last frames of two one-time codes differ in %d pixels: the field shows the code", n)
	}
	if n := differing(a, longer, 24); n < 30 {
		t.Errorf("a code one digit longer changes %d pixels of the last frame only: the frame does not show the typed field", n)
	}
}
