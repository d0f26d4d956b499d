package notify

import "fmt"

// Event names why a notification is sent.
type Event string

const (
	// Ended: the run reached a terminal status.
	Ended Event = "run.ended"
	// Waiting: the run waits for a person (a one-time code, a confirmation).
	Waiting Event = "run.waiting"
)

// Summary is what a notification says about a run. It carries no inputs,
// answers or results (see the package comment): a webhook receiver learns
// that something happened and where to look, not what the run read.
type Summary struct {
	Event      Event  `json:"event"`
	RunID      string `json:"runId"`
	TemplateID string `json:"templateId"`
	Status     string `json:"status"`
	DoneSteps  int    `json:"doneSteps"`
	TotalSteps int    `json:"totalSteps"`
	// FailedSteps counts the steps that failed.
	FailedSteps int    `json:"failedSteps"`
	ErrorCode   string `json:"errorCode,omitempty"`
	Message     string `json:"message,omitempty"`
	// QuestionKind and Question say what a waiting run asks ("secret",
	// "confirm"), never an answer.
	QuestionKind string   `json:"questionKind,omitempty"`
	Question     string   `json:"question,omitempty"`
	ArtifactIDs  []string `json:"artifactIds"`
	// At is when the notification was made, in Unix milliseconds; a
	// receiver refuses old ones to defeat replays of a signed body.
	At int64 `json:"at"`
}

// Title is the summary's one-line heading for a desktop notification.
func (s Summary) Title() string {
	if s.Event == Waiting {
		return fmt.Sprintf("browsertask: %s waits for you", s.TemplateID)
	}
	return fmt.Sprintf("browsertask: %s %s", s.TemplateID, s.Status)
}

// Body is the summary's text for a desktop notification.
func (s Summary) Body() string {
	if s.Event == Waiting {
		return fmt.Sprintf("%s asks: %s\nbrowsertask answer %s", s.RunID, s.Question, s.RunID)
	}
	b := fmt.Sprintf("%s: %d/%d steps done", s.RunID, s.DoneSteps, s.TotalSteps)
	if s.FailedSteps > 0 {
		b += fmt.Sprintf(", %d failed", s.FailedSteps)
	}
	if s.ErrorCode != "" {
		b += fmt.Sprintf("\n%s: %s", s.ErrorCode, s.Message)
	}
	if n := len(s.ArtifactIDs); n > 0 {
		b += fmt.Sprintf("\n%d artifact(s) kept", n)
	}
	return b
}
