// Package agent is the TaskAgent's loop without a browser: the small JSON
// protocol a model answers in (Parse), the prompt it reads (Prompt), which
// actions have side effects (Classify), the state hash loop detection
// counts (StateHash) and the run_steps a finished task replays as
// (ReplaySteps). templates/agent_task*.go drives a tab with it; keeping the
// protocol here lets it be fuzzed and tested without Chromium.
package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/browsertask/browsertask/internal/snapshot"
)

// Kinds of action a model may ask for.
const (
	Navigate   = "navigate"
	Click      = "click"
	Fill       = "fill"
	Select     = "select"
	Press      = "press"
	Wait       = "wait"
	AskPerson  = "ask_person"
	Answer     = "answer"
	Screenshot = "screenshot"
)

// kinds lists the actions in the order the prompt shows them.
var kinds = []string{Navigate, Click, Fill, Select, Press, Wait, Screenshot, AskPerson, Answer}

// MaxActions bounds the actions of one reply: a model that plans further
// ahead than this acts on a page it no longer sees.
const MaxActions = 5

// Evidence is where an answered property was read: the page's URL, and
// the element (a reference of the snapshot, its text) when there is one.
type Evidence struct {
	URL  string `json:"url"`
	Ref  string `json:"ref,omitempty"`
	Text string `json:"text,omitempty"`
}

// Action is one step a model asks for. Which fields apply depends on
// Action: Ref for click, fill, select and (optionally) press and
// ask_person; Value for fill, select and the key of press; URL for
// navigate; Text for wait; Question, Secret and Takeover for ask_person;
// Result and Evidence for answer.
type Action struct {
	Action   string              `json:"action"`
	Ref      string              `json:"ref,omitempty"`
	Value    string              `json:"value,omitempty"`
	URL      string              `json:"url,omitempty"`
	Text     string              `json:"text,omitempty"`
	Question string              `json:"question,omitempty"`
	Secret   bool                `json:"secret,omitempty"`
	Takeover bool                `json:"takeover,omitempty"`
	Result   json.RawMessage     `json:"result,omitempty"`
	Evidence map[string]Evidence `json:"evidence,omitempty"`
}

// Reply is a model's parsed answer: what it thinks (shown in progress,
// never acted on) and the actions, in order.
type Reply struct {
	Thought string   `json:"thought,omitempty"`
	Actions []Action `json:"actions"`
}

// Parse reads a model's reply: one JSON object, either {"thought",
// "actions": [...]} or a single action object; text around the object
// (code fences, a sentence) is ignored. Every action is checked for the
// fields it needs; the error says which action and field, in words the
// model is shown on its next turn.
func Parse(text string) (*Reply, error) {
	obj, err := jsonObject(text)
	if err != nil {
		return nil, err
	}
	var probe struct {
		Actions json.RawMessage `json:"actions"`
		Action  json.RawMessage `json:"action"`
		Thought string          `json:"thought"`
	}
	if err := json.Unmarshal(obj, &probe); err != nil {
		return nil, fmt.Errorf("the reply is not a JSON object of the protocol: %v", err)
	}
	r := &Reply{Thought: probe.Thought}
	switch {
	case len(probe.Actions) > 0:
		if err := json.Unmarshal(probe.Actions, &r.Actions); err != nil {
			return nil, fmt.Errorf("actions must be a list of action objects: %v", err)
		}
	case len(probe.Action) > 0:
		var a Action
		if err := json.Unmarshal(obj, &a); err != nil {
			return nil, fmt.Errorf("the action object is malformed: %v", err)
		}
		r.Actions = []Action{a}
	default:
		return nil, errors.New(`the reply has neither "actions" nor "action"`)
	}
	if len(r.Actions) == 0 {
		return nil, errors.New("actions is empty: give at least one action")
	}
	if len(r.Actions) > MaxActions {
		return nil, fmt.Errorf("%d actions in one reply; give at most %d, the page is observed again after them", len(r.Actions), MaxActions)
	}
	for i := range r.Actions {
		if err := check(&r.Actions[i]); err != nil {
			return nil, fmt.Errorf("actions[%d]: %v", i, err)
		}
		if r.Actions[i].Action == Answer && i != len(r.Actions)-1 {
			return nil, fmt.Errorf("actions[%d]: answer must be the last action", i)
		}
	}
	return r, nil
}

// check holds one action to the fields its kind needs.
func check(a *Action) error {
	a.Action = strings.TrimSpace(a.Action)
	needRef := func() error {
		if _, err := snapshot.ParseRef(a.Ref); err != nil {
			return fmt.Errorf("%s needs ref: %v", a.Action, err)
		}
		a.Ref = strings.TrimSpace(a.Ref)
		return nil
	}
	switch a.Action {
	case Click:
		return needRef()
	case Fill, Select:
		return needRef()
	case Press:
		if a.Value == "" {
			return errors.New(`press needs value: the key, such as "Enter"`)
		}
		if a.Ref != "" {
			return needRef()
		}
	case Navigate:
		if !strings.HasPrefix(a.URL, "http://") && !strings.HasPrefix(a.URL, "https://") {
			return errors.New("navigate needs url: an absolute http(s) URL")
		}
	case Wait:
		if strings.TrimSpace(a.Text) == "" {
			return errors.New("wait needs text: the text to wait for")
		}
	case AskPerson:
		if strings.TrimSpace(a.Question) == "" {
			return errors.New("ask_person needs question: what to ask the person")
		}
		if a.Ref != "" {
			return needRef()
		}
		if a.Secret && a.Ref == "" {
			return errors.New("ask_person with secret needs ref: the field the answer is typed into (you never see a secret)")
		}
	case Screenshot:
		return nil
	case Answer:
		if len(a.Result) == 0 || a.Result[0] != '{' {
			return errors.New("answer needs result: a JSON object following the output schema")
		}
	default:
		return fmt.Errorf("action %q is not one of %s", a.Action, strings.Join(kinds, ", "))
	}
	return nil
}

// jsonObject finds the JSON object in text: the whole text when it is one,
// else from the first '{' to its matching '}' (a model may wrap its
// object in a code fence or a sentence).
func jsonObject(text string) (json.RawMessage, error) {
	t := strings.TrimSpace(text)
	if json.Valid([]byte(t)) && strings.HasPrefix(t, "{") {
		return json.RawMessage(t), nil
	}
	start := strings.IndexByte(t, '{')
	if start < 0 {
		return nil, errors.New("the reply holds no JSON object")
	}
	dec := json.NewDecoder(strings.NewReader(t[start:]))
	var raw json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("the reply's JSON object is malformed: %v", err)
	}
	if len(raw) == 0 || raw[0] != '{' {
		return nil, errors.New("the reply holds no JSON object")
	}
	return raw, nil
}
