package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// System is the system prompt of every turn: the protocol, short, since
// it is sent with each question.
const System = `You carry out a task in a web browser for a person. Each turn you see the goal, the JSON Schema of the answer, the steps so far and a snapshot of the current page (elements with references such as e12). Reply with ONE JSON object and nothing else:
{"thought": "<short>", "actions": [<1 to 5 actions>]}
Actions:
{"action":"navigate","url":"https://..."}
{"action":"click","ref":"e12"}
{"action":"fill","ref":"e12","value":"text"}   (replaces the field's value)
{"action":"select","ref":"e12","value":"option value or label"}
{"action":"press","value":"Enter","ref":"e12"}   (ref optional: the focused element otherwise)
{"action":"wait","text":"text that must appear"}
{"action":"screenshot"}   (the next turn shows you an image of the page too, when the snapshot is not enough)
{"action":"ask_person","question":"...","ref":"e12","secret":true}   (you are stuck, or need a value only the person has: with ref the answer is typed into that field; secret for one-time codes and PINs, which you never see; "takeover":true asks the person to act in the browser themselves)
{"action":"answer","result":{...},"evidence":{"<property>":{"url":"page URL","ref":"e12","text":"what the page shows"}}}   (last action; result follows the schema; one evidence entry per property of result)
After your actions the page is observed again. Use only references of the latest snapshot.`

// Turn is what one question to the model is made of.
type Turn struct {
	Goal     string
	Schema   string
	History  []string
	Snapshot string
	// Feedback is what went wrong with the last reply or action (the
	// model is told, to correct itself); "" when nothing did.
	Feedback string
}

// MaxHistory is how many past steps a prompt lists (the latest ones): the
// page itself is the state, the history only orients.
const MaxHistory = 12

// Prompt writes the user message of a turn.
func Prompt(t Turn) string {
	var b strings.Builder
	b.WriteString("Goal: " + t.Goal + "\n\nAnswer schema: " + t.Schema + "\n\n")
	h := t.History
	if len(h) > MaxHistory {
		b.WriteString("Steps so far (the latest " + itoa(MaxHistory) + " of " + itoa(len(h)) + "):\n")
		h = h[len(h)-MaxHistory:]
	} else if len(h) > 0 {
		b.WriteString("Steps so far:\n")
	} else {
		b.WriteString("No steps yet.\n")
	}
	for _, s := range h {
		b.WriteString("- " + s + "\n")
	}
	if t.Feedback != "" {
		b.WriteString("\nProblem with your last reply: " + t.Feedback + "\n")
	}
	b.WriteString("\nCurrent page:\n" + t.Snapshot)
	return b.String()
}

// StateHash names what the agent saw: the page's URL and its snapshot.
// The same hash coming back again and again means the task goes in
// circles (loop detection).
func StateHash(url, snapshot string) string {
	sum := sha256.Sum256([]byte(url + "\x00" + snapshot))
	return hex.EncodeToString(sum[:8])
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var d []byte
	for n > 0 {
		d = append([]byte{byte('0' + n%10)}, d...)
		n /= 10
	}
	return string(d)
}
