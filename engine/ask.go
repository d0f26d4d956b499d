package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// A run can ask for input while it runs: a one-time code, a confirmation,
// a value only the person knows, or (for the protocol fixtures) any MCP
// input request. The request is stored with the run (run_inputs), the run
// waits, and whoever answers (an MCP client through tasks/update, from any
// process on the database) writes the response there. The waiting run
// polls its rows, waking early on local changes.

// Input kinds: what a question asks for.
const (
	// QuestionText asks for a value the person types (shown as typed).
	QuestionText = "text"
	// QuestionSecret asks for a value that stays secret: a one-time code, a
	// PIN. Its answer travels sealed to the executing process (seal.go)
	// and is masked wherever the run writes.
	QuestionSecret = "secret"
	// QuestionConfirm asks a yes/no question.
	QuestionConfirm = "confirm"
	// QuestionMCP is a raw MCP input request (the protocol fixtures).
	QuestionMCP = "mcp"
)

// Question is one question a run asked, and its answer once given.
type Question struct {
	RunID     string `json:"runId"`
	RequestID string `json:"requestId"`
	// Kind says what is asked: QuestionText, QuestionSecret, QuestionConfirm,
	// QuestionTakeover or QuestionMCP (Request says which).
	Kind    string `json:"kind"`
	Message string `json:"message"`
	// Request is the MCP form of the question: {"method", "params"}, as it
	// appears in inputRequests.
	Request     json.RawMessage `json:"request"`
	RequestedAt int64           `json:"requestedAt"`
	ExpiresAt   int64           `json:"expiresAt"`
	// Response is the answer (the MCP result of Request), nil while the
	// question is outstanding; for a secret question it is sealed.
	Response   json.RawMessage `json:"response,omitempty"`
	AnsweredAt int64           `json:"answeredAt,omitempty"`
	// PublicKey is the X25519 key answers to a secret question are sealed
	// to (nil for other kinds).
	PublicKey []byte `json:"-"`
}

// WaitingQuestion is what a Run shows of the question it waits on, as its
// optional inputRequest field.
type WaitingQuestion struct {
	RequestID   string `json:"requestId"`
	Kind        string `json:"kind"`
	Message     string `json:"message"`
	RequestedAt int64  `json:"requestedAt"`
	ExpiresAt   int64  `json:"expiresAt"`
	// URL is where to answer a takeover: the run's live view on the
	// dashboard of the process that runs it.
	URL string `json:"url,omitempty"`
}

// Waiting is the view of the request a Run shows.
func (r Question) Waiting() *WaitingQuestion {
	return &WaitingQuestion{RequestID: r.RequestID, Kind: r.Kind, Message: r.Message, RequestedAt: r.RequestedAt, ExpiresAt: r.ExpiresAt,
		URL: requestURL(r.Request)}
}

// Answered reports whether the request has its response.
func (r Question) Answered() bool { return r.Response != nil }

// SaveAnswerParams are the arguments of Store.SaveAnswer.
type SaveAnswerParams struct {
	RunID, RequestID string
	Response         json.RawMessage
	Now              int64
}

// DefaultQuestionTimeout is how long a run waits for an answer when the
// configuration does not say (10 minutes).
const DefaultQuestionTimeout = 10 * time.Minute

// questionPoll is how often a waiting run looks for an answer another process
// may have written; local answers wake it at once.
const questionPoll = 250 * time.Millisecond

// Ask stores the question and waits for its answer, which it returns. A
// question asked again with the same RequestID (a run resumed after a
// crash) keeps its stored answer. While it waits the run's timeout clock
// stops, progress.message says what it waits for, and an "input" event is
// logged. The wait ends with the run's context (cancel, shutdown) or with
// RUN_TIMEOUT, details.reason "no answer", when nobody answered within the
// input timeout. A secret question's answer arrives sealed (seal.go); its
// values are masked in everything the run writes from then on.
func (v *runEnv) Ask(ctx context.Context, q Question) (json.RawMessage, error) {
	return v.ask(ctx, q, nil)
}

// ask is Ask; stored, when not nil, is called once the question is stored
// (nil) or could not be (the error).
func (v *runEnv) ask(ctx context.Context, q Question, stored func(error)) (json.RawMessage, error) {
	if stored == nil {
		stored = func(error) {}
	}
	if q.RequestID == "" || len(q.Request) == 0 {
		err := Errorf(ExecutionError, "input request needs a requestId and a request")
		stored(err)
		return nil, err
	}
	runID := v.run.RunID
	now := v.e.now()
	q.RunID = runID
	q.RequestedAt = now
	q.ExpiresAt = now + v.e.cfg.QuestionTimeout.Milliseconds()
	if q.Kind == QuestionSecret {
		pub, err := v.e.questionKeys.generate(runID, q.RequestID)
		if err != nil {
			err = Wrap(ExecutionError, err, "%v", err)
			stored(err)
			return nil, err
		}
		q.PublicKey = pub
		defer v.e.questionKeys.forget(runID, q.RequestID)
	}
	// progress.message is written before the question, so whoever sees
	// the question (inputRequest) also sees what the run waits for.
	v.startWaiting(q)
	defer v.stopWaiting(q.RequestID)
	wctx, cancel := writeCtx(ctx)
	err := v.e.store.AddQuestion(wctx, q)
	cancel()
	if err != nil {
		err = Wrap(ExecutionError, err, "store input request: %v", err)
		stored(err)
		return nil, err
	}
	stored(nil)
	if v.deadline != nil {
		v.deadline.pause()
		defer v.deadline.resume()
	}
	v.e.event(runID, "input", map[string]any{"requestId": q.RequestID, "kind": q.Kind, "message": q.Message})
	v.e.notify()
	t := time.NewTicker(questionPoll)
	defer t.Stop()
	for {
		ch := v.e.changes()
		reqs, err := v.e.store.Questions(ctx, runID)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, Wrap(ExecutionError, err, "read input requests: %v", err)
		}
		for _, r := range reqs {
			if r.RequestID != q.RequestID {
				continue
			}
			if r.Answered() {
				return v.opened(r)
			}
			if v.e.now() >= r.ExpiresAt {
				return nil, Errorf(RunTimeout, "no answer to %q within %d ms (--input-timeout-ms)", q.Message, v.e.cfg.QuestionTimeout.Milliseconds()).
					WithDetails(map[string]any{"reason": "no answer", "requestId": q.RequestID, "inputTimeoutMs": v.e.cfg.QuestionTimeout.Milliseconds()})
			}
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ch:
		case <-t.C:
		}
	}
}

// startWaiting records that the run waits for q: progress.message says
// so (the progress before the first of parallel questions is kept).
func (v *runEnv) startWaiting(q Question) {
	v.mu.Lock()
	if len(v.waiting) == 0 {
		v.beforeWait = v.progress
	}
	v.waiting = append(v.waiting, q)
	p := v.beforeWait
	v.mu.Unlock()
	p.Message = "waiting for input: " + q.Message
	v.saveProgress(p)
}

// stopWaiting records that the run no longer waits for requestID: the
// message names a question still open, or the progress before the wait
// comes back.
func (v *runEnv) stopWaiting(requestID string) {
	v.mu.Lock()
	for i, w := range v.waiting {
		if w.RequestID == requestID {
			v.waiting = append(v.waiting[:i], v.waiting[i+1:]...)
			break
		}
	}
	p := v.beforeWait
	if len(v.waiting) > 0 {
		p.Message = "waiting for input: " + v.waiting[0].Message
	}
	v.mu.Unlock()
	v.saveProgress(p)
}

// opened returns a stored answer in clear: a secret one is opened with this
// process's key and its values join the run's secrets.
func (v *runEnv) opened(r Question) (json.RawMessage, error) {
	if r.Kind != QuestionSecret {
		return r.Response, nil
	}
	resp, ok := v.e.questionKeys.open(r.RunID, r.RequestID, r.PublicKey, r.Response)
	if !ok {
		return nil, interruptedError().WithDetails(map[string]any{"reason": "the secret answer was sealed for a process that stopped", "requestId": r.RequestID})
	}
	var res elicitResult
	if json.Unmarshal(resp, &res) == nil {
		for _, val := range res.Content {
			if s, ok := val.(string); ok {
				v.e.secrets.add(r.RunID, s)
			}
		}
	}
	return resp, nil
}

// PendingQuestions returns the questions run runID is waiting on (empty for
// a run that waits for nothing, or is unknown).
func (e *Engine) PendingQuestions(ctx context.Context, runID string) ([]Question, error) {
	reqs, err := e.store.Questions(ctx, runID)
	if err != nil {
		return nil, Wrap(ExecutionError, err, "read input requests: %v", err)
	}
	now := e.now()
	out := []Question{}
	for _, r := range reqs {
		if !r.Answered() && now < r.ExpiresAt {
			out = append(out, r)
		}
	}
	return out, nil
}

// AnswerQuestionMCP delivers the answer to one outstanding question of run runID.
// It reports false when there is no such outstanding question (never
// asked, answered already, expired): the caller may ignore that, as the
// Tasks extension asks. Errors: RUN_NOT_FOUND.
func (e *Engine) AnswerQuestionMCP(ctx context.Context, runID, requestID string, response json.RawMessage) (bool, error) {
	if _, err := e.Get(ctx, runID); err != nil {
		return false, err
	}
	if len(response) == 0 {
		return false, Errorf(InvalidParameter, "the response to %q is empty", requestID)
	}
	reqs, err := e.store.Questions(ctx, runID)
	if err != nil {
		return false, Wrap(ExecutionError, err, "read input requests: %v", err)
	}
	for _, q := range reqs {
		if q.RequestID != requestID {
			continue
		}
		if q.Kind == QuestionTakeover && !q.Answered() {
			// A URL-mode elicitation accepted means the person agreed to
			// open the live view, not that they are done: the takeover
			// stays open until Done (AnswerQuestion). A decline or cancel
			// ends it.
			var res elicitResult
			if json.Unmarshal(response, &res) == nil && res.Action == "accept" {
				return true, nil
			}
		}
		return e.deliver(ctx, q, response)
	}
	return false, nil
}

// deliver writes the response to question q: sealed to the asking
// process's key for a secret question (seal.go). It reports false when q
// is no longer outstanding (answered, expired).
func (e *Engine) deliver(ctx context.Context, q Question, response json.RawMessage) (bool, error) {
	if q.Kind == QuestionSecret {
		var err error
		if response, err = sealAnswer(q.PublicKey, response); err != nil {
			return false, Wrap(ExecutionError, err, "%v", err)
		}
	}
	ok, err := e.store.SaveAnswer(ctx, SaveAnswerParams{RunID: q.RunID, RequestID: q.RequestID, Response: response, Now: e.now()})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return false, nil
		}
		return false, Wrap(ExecutionError, err, "store answer: %v", err)
	}
	if ok {
		e.event(q.RunID, "input", map[string]any{"requestId": q.RequestID, "answered": true})
		e.notify()
	}
	return ok, nil
}

// String describes the request for logs.
func (r Question) String() string {
	return fmt.Sprintf("input %s/%s (%s)", r.RunID, r.RequestID, r.Kind)
}
