package agent

import (
	"strings"
	"testing"
)

func TestParseAcceptsBothShapesAndFences(t *testing.T) {
	for _, c := range []struct {
		text string
		n    int
		kind string
	}{
		{`{"thought":"go","actions":[{"action":"click","ref":"e3"},{"action":"fill","ref":" e4 ","value":"x"}]}`, 2, Click},
		{"```json\n{\"action\":\"navigate\",\"url\":\"https://a.example/\"}\n```", 1, Navigate},
		{`Sure: {"action":"answer","result":{"a":1},"evidence":{"a":{"url":"https://a.example/"}}} done`, 1, Answer},
		{`{"action":"ask_person","question":"Code?","ref":"e9","secret":true}`, 1, AskPerson},
		{`{"action":"press","value":"Enter"}`, 1, Press},
	} {
		r, err := Parse(c.text)
		if err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		if len(r.Actions) != c.n || r.Actions[0].Action != c.kind {
			t.Fatalf("%s: %+v", c.text, r.Actions)
		}
	}
	r, _ := Parse(`{"actions":[{"action":"click","ref":"e3"},{"action":"fill","ref":" e4 ","value":"x"}]}`)
	if r.Actions[1].Ref != "e4" {
		t.Fatalf("ref not trimmed: %q", r.Actions[1].Ref)
	}
}

func TestParseRefusalsNameTheActionAndField(t *testing.T) {
	for text, want := range map[string]string{
		`no json here`:                                "no JSON object",
		`{"thought":"x"}`:                             `neither "actions" nor "action"`,
		`{"actions":[]}`:                              "actions is empty",
		`{"actions":[{"action":"click"}]}`:            "actions[0]: click needs ref",
		`{"actions":[{"action":"click","ref":"e0"}]}`: "actions[0]: click needs ref",
		`{"actions":[{"action":"fly","ref":"e1"}]}`:   `action "fly" is not one of navigate, click`,
		`{"actions":[{"action":"navigate","url":"javascript:alert(1)"}]}`:                                                 "navigate needs url",
		`{"actions":[{"action":"ask_person","question":"PIN?","secret":true}]}`:                                           "secret needs ref",
		`{"actions":[{"action":"answer","result":{}},{"action":"click","ref":"e1"}]}`:                                     "answer must be the last action",
		`{"actions":[{"action":"answer","result":[1]}]}`:                                                                  "answer needs result",
		`{"actions":[{"action":"wait"}]}`:                                                                                 "wait needs text",
		`{"actions":[{"action":"press"}]}`:                                                                                "press needs value",
		`{"actions":[` + strings.Repeat(`{"action":"click","ref":"e1"},`, MaxActions) + `{"action":"click","ref":"e1"}]}`: "at most 5",
	} {
		_, err := Parse(text)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one saying %q", text, err, want)
		}
	}
}

// FuzzParse: no reply a model (or a page it copies) writes makes Parse
// panic, and what it accepts holds to the protocol.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"action":"click","ref":"e1"}`, `{"actions":[{"action":"fill","ref":"e2","value":"v"}]}`,
		"```{\"action\":\"answer\",\"result\":{}}```", `{"actions":[{"action":"ask_person","question":"q","takeover":true}]}`, `{`, `{"actions":null}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		r, err := Parse(text)
		if err != nil {
			return
		}
		if len(r.Actions) == 0 || len(r.Actions) > MaxActions {
			t.Fatalf("accepted %d actions", len(r.Actions))
		}
		for i, a := range r.Actions {
			if err := check(&a); err != nil {
				t.Fatalf("accepted action %d fails its own check: %v", i, err)
			}
			if a.Action == Answer && i != len(r.Actions)-1 {
				t.Fatal("answer accepted before the end")
			}
		}
	})
}
