package agent

// Done is one action of a finished task as replay needs it: what was
// done, to which element (a CSS selector that held when it was done), and
// what the person was asked around it.
type Done struct {
	Action Action `json:"action"`
	// Selector is a CSS selector matching exactly the acted-on element
	// when it was acted on ("" for actions without an element).
	Selector string `json:"selector,omitempty"`
	// Confirmed says a person said yes before the action (confirm).
	Confirmed bool `json:"confirmed,omitempty"`
	// ConfirmMessage is the question they said yes to.
	ConfirmMessage string `json:"confirmMessage,omitempty"`
	// OK says the action succeeded; failed actions are not replayed.
	OK bool `json:"ok"`
	// WaitText is text of the page the action led to (its heading): the
	// replay waits for it before the next step.
	WaitText string `json:"waitText,omitempty"`
}

// ReplaySteps turns the successful actions of a finished task into
// run_steps steps that do the same with no model: selectors instead of
// references, the person asked again where they were asked (a secret is
// never written into a step: it is asked for again), and an extract
// step per answered property whose evidence named an element
// (answerSelectors: property → selector). The steps run after startUrl.
func ReplaySteps(done []Done, answerSelectors map[string]string, order []string) []map[string]any {
	var out []map[string]any
	add := func(s map[string]any) { out = append(out, s) }
	for _, d := range done {
		if !d.OK {
			continue
		}
		a := d.Action
		if d.Confirmed {
			add(map[string]any{"action": "confirm", "message": d.ConfirmMessage})
		}
		switch a.Action {
		case Navigate:
			add(map[string]any{"action": "navigate", "url": a.URL})
		case Click:
			add(map[string]any{"action": "click", "selector": d.Selector})
		case Fill:
			if a.Secret {
				// A password field: its value was not recorded.
				add(map[string]any{"action": "ask", "message": "The value of the password field " + d.Selector + "?", "selector": d.Selector, "secret": true})
				break
			}
			add(map[string]any{"action": "type", "selector": d.Selector, "text": a.Value})
		case Select:
			add(map[string]any{"action": "select", "selector": d.Selector, "value": a.Value})
		case Press:
			if d.Selector != "" {
				add(map[string]any{"action": "click", "selector": d.Selector})
			}
			add(map[string]any{"action": "press", "key": a.Value})
		case Wait:
			add(map[string]any{"action": "wait_for", "text": a.Text})
		case AskPerson:
			switch {
			case a.Takeover:
				add(map[string]any{"action": "takeover", "message": a.Question})
			case d.Selector != "":
				add(map[string]any{"action": "ask", "message": a.Question, "selector": d.Selector, "secret": a.Secret})
			}
		}
		if d.WaitText != "" {
			add(map[string]any{"action": "wait_for", "text": d.WaitText})
		}
	}
	for _, name := range order {
		if sel := answerSelectors[name]; sel != "" {
			add(map[string]any{"action": "extract", "name": name, "selector": sel})
		}
	}
	return out
}
