package web

import (
	"encoding/hex"
	"net/http"
	"net/url"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// Form fields of the answer form (POST /runs/{id}/answer, body only):
// requestId names the question; value carries a text or secret answer;
// confirm is "yes" or "no" for a confirm question.
const (
	fieldRequestID = "requestId"
	fieldValue     = "value"
	fieldConfirm   = "confirm"
)

// answeredParam is the run page's query parameter after an answer was
// sent from a plain form: it names the question (never the answer).
const answeredParam = "answered"

// answerRun answers one of the run's questions from the run page's form
// through engine.AnswerQuestion. The answer is read from the POST body only
// and is never logged, echoed or put in a URL. A plain form is redirected
// to the run page (303) with a notice, or gets the run page with the error
// (400 INVALID_PARAMETER: answered already, expired, wrong kind; 404
// RUN_NOT_FOUND). htmx gets the run's live region and the notice or error
// (200, so htmx swaps it).
func (d *Dashboard) answerRun(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := r.ParseForm(); err != nil {
		d.fail(w, r, engine.Errorf(engine.InvalidParameter, "form: %v", err))
		return
	}
	requestID := r.PostForm.Get(fieldRequestID)
	a, err := formAnswer(r.PostForm)
	if err == nil {
		_, err = d.eng.AnswerQuestion(r.Context(), id, requestID, a)
	}
	htmx := r.Header.Get("HX-Request") == "true"
	if err == nil {
		d.log.Info("question answered from the dashboard", "runId", id, "requestId", requestID)
		if !htmx {
			http.Redirect(w, r, "/runs/"+url.PathEscape(id)+"?"+url.Values{answeredParam: {requestID}}.Encode(), http.StatusSeeOther)
			return
		}
	}
	if engine.CodeOf(err) == engine.RunNotFound {
		d.fail(w, r, err)
		return
	}
	v, verr := d.runView(r, id)
	if verr != nil {
		d.fail(w, r, verr)
		return
	}
	status := http.StatusOK
	if err != nil {
		e := engine.AsError(err)
		v.AnswerError = errorView(e)
		if !htmx {
			status = errorStatus(e)
		}
	} else {
		v.AnswerNote = answerNote(requestID)
	}
	d.render(w, r, status, runPage(v), answerReply(v))
}

// formAnswer reads the answer from the form: value for text and secret
// questions, confirm ("yes" or "no") for confirm questions. Which one the
// question needs is the engine's check (INVALID_PARAMETER naming the
// field).
func formAnswer(form url.Values) (engine.Answer, error) {
	var a engine.Answer
	if form.Has(fieldValue) {
		v := form.Get(fieldValue)
		a.Value = &v
	}
	if form.Has(fieldConfirm) {
		var yes bool
		switch form.Get(fieldConfirm) {
		case "yes", "true":
			yes = true
		case "no", "false":
		default:
			return a, engine.Errorf(engine.InvalidParameter, "confirm must be yes or no, got %q", form.Get(fieldConfirm)).
				WithDetails(map[string]any{"field": fieldConfirm})
		}
		a.Confirm = &yes
	}
	return a, nil
}

// answerNote confirms an answer to requestID was sent.
func answerNote(requestID string) string {
	if requestID == "" {
		return "Answer sent."
	}
	return "Answer sent (" + requestID + ")."
}

// questionViews turns the run's outstanding questions into their views.
func questionViews(reqs []engine.Question, now time.Time) []QuestionView {
	var out []QuestionView
	for _, q := range reqs {
		v := QuestionView{RequestID: q.RequestID, Kind: q.Kind, Message: q.Message,
			Asked: ago(now, q.RequestedAt), Expires: inTime(now, q.ExpiresAt),
			ExpiresAt:  time.UnixMilli(q.ExpiresAt).Format(time.RFC3339),
			FormID:     "answer-" + hex.EncodeToString([]byte(q.RequestID)),
			Answerable: true}
		switch q.Kind {
		case engine.QuestionSecret:
			v.KindLabel = "secret (a one-time code, a PIN): kept out of every record"
		case engine.QuestionText:
			v.KindLabel = "text"
		case engine.QuestionConfirm:
			v.KindLabel = "yes or no"
		case engine.QuestionTakeover:
			v.KindLabel = "takeover: act in the run's browser in the live view, then press Done"
			v.URL = q.Waiting().URL
		default:
			v.KindLabel = "MCP request: answer it from the AI client that started the run"
			v.Answerable = false
		}
		if v.Message == "" {
			v.Message = "(no message)"
		}
		out = append(out, v)
	}
	return out
}
