package acceptance

// Issue 32, acceptance 3 (the task that needs a takeover): agent_task on a
// page only a person's pointer passes; the scripted model asks for a
// takeover, the test as the person clicks the button through the
// dashboard's live view and presses Done, and the agent goes on to the
// page behind the check.

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-rod/rod"
	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/internal/fixture"
)

// takeoverModel is the scripted model of the human check: take over,
// continue once verified, answer from the welcome page.
func takeoverModel(t *testing.T) *fixture.ScriptedModel {
	return fixture.NewScriptedModel(t, func(prompt string) string {
		page := prompt[strings.LastIndex(prompt, "Current page:\n"):]
		url := strings.Fields(strings.SplitN(page, "\n", 3)[1])
		reply := func(v any) string { b, _ := json.Marshal(v); return string(b) }
		switch {
		case strings.Contains(page, "Welcome, person"):
			return reply(obj{"action": "answer", "result": obj{"welcome": "Welcome, person"}, "evidence": obj{"welcome": obj{"url": url[len(url)-1], "text": "Welcome, person"}}})
		case fixture.Ref(page, "link", "Continue") != "":
			return reply(obj{"action": "click", "ref": fixture.Ref(page, "link", "Continue")})
		case fixture.Ref(page, "button", "I am human") != "":
			return reply(obj{"action": "ask_person", "takeover": true, "question": "Prove you are a person: click I am human, then press Done"})
		}
		t.Errorf("unscripted state:\n%s", prompt)
		return `{"action":"ask_person","question":"unscripted"}`
	})
}

func TestBlackboxAgentTaskTakeover(t *testing.T) {
	fixture.NeedChromium(t)
	t.Parallel()
	fx := fixture.New(t)
	model := takeoverModel(t)
	srv := startServe(t, "--model-url", model.BaseURL(), "--model", "scripted")
	cs := connectHTTP(t, srv, nil)
	schema := obj{"type": "object", "required": []any{"welcome"}, "properties": obj{"welcome": obj{"type": "string"}}}
	id := submitAsync(t, cs, "agent_task", obj{"goal": "Get past the human check and read the welcome", "startUrl": fx.URL("/human-check")}, obj{"outputSchema": schema})
	r := waitRun(t, cs, id, "the takeover question", func(r obj) bool {
		ir, _ := r["inputRequest"].(obj)
		return (ir != nil && strings.HasPrefix(ir["requestId"].(string), "agent-0-")) || terminal(r["status"])
	})
	ir := sub(r, "inputRequest")
	if ir["kind"] != "takeover" || ir["url"] != "http://"+srv.addr+"/runs/"+id+"#live" {
		t.Fatalf("takeover question: %v", ir)
	}

	// The person opens the live view and passes the check with their pointer.
	b := rod.New().ControlURL(startCDPChromium(t))
	if err := b.Connect(); err != nil {
		t.Fatal(err)
	}
	p := b.MustPage(ir["url"].(string))
	p.MustSetViewport(1400, 1100, 1, false)
	pageTrue(t, p, "the takeover and its live frame", `() => !!document.querySelector('#takeover-done') &&
		document.querySelector('#live .live-tabs')?.dataset.control === 'true' && !!document.querySelector('#live .live-tab[data-closed="false"] .frame img.shot') &&
		document.querySelector('#live .live-tab .frame img.shot').naturalWidth > 0`)
	res, err := p.Eval(`() => { const i = document.querySelector('#live .live-tab .frame img.shot'), r = i.getBoundingClientRect(); return [r.x, r.y, r.width, r.height, i.naturalWidth, i.naturalHeight] }`)
	if err != nil {
		t.Fatal(err)
	}
	box := res.Value.Arr()
	x0, y0, w, h, nw, nh := box[0].Num(), box[1].Num(), box[2].Num(), box[3].Num(), box[4].Num(), box[5].Num()
	at := func(x, y float64) proto.Point { return proto.Point{X: x0 + x/nw*w, Y: y0 + y/nh*h} }
	cx := float64(fixture.HumanButtonLeft + fixture.HumanButtonWidth/2)
	cy := float64(fixture.HumanButtonTop + fixture.HumanButtonHeight/2)
	if err := p.Mouse.MoveTo(at(cx-120, cy-20)); err != nil {
		t.Fatal(err)
	}
	if err := p.Mouse.MoveLinear(at(cx, cy), 8); err != nil {
		t.Fatal(err)
	}
	if err := p.Mouse.Click(proto.InputMouseButtonLeft, 1); err != nil {
		t.Fatal(err)
	}
	liveSent(t, p)
	if _, err := p.Eval(`() => document.querySelector('#takeover-done').click()`); err != nil {
		t.Fatal(err)
	}

	run := waitTerminal(t, cs, id)
	if run["status"] != "succeeded" || sub(sub(run, "result"), "answer")["welcome"] != "Welcome, person" {
		t.Fatalf("run: %v %v %v", run["status"], run["result"], run["error"])
	}
	if n := fx.Hits("/human-check/next"); n != 1 {
		t.Fatalf("/human-check/next requests: %d, want 1", n)
	}
	if model.Calls() != 3 {
		t.Fatalf("model calls: %d, want 3 (check, verified, welcome)", model.Calls())
	}
}
