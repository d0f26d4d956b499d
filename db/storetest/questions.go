package storetest

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// testQuestions: a run's questions are stored once (asking again keeps the
// answer), answered once, not after they expire, from any handle on the
// database, and go with their run.
func testQuestions(t *testing.T, nh func(t *testing.T) Harness) {
	ask := func(id string, expires int64) engine.Question {
		return engine.Question{RunID: "run_1", RequestID: id, Kind: "mcp", Message: "Delete it?",
			Request:     json.RawMessage(`{"method":"elicitation/create","params":{"message":"Delete it?"}}`),
			RequestedAt: base + 10, ExpiresAt: expires}
	}
	t.Run("AskAnswerAcrossHandles", func(t *testing.T) {
		h := nh(t)
		other := peer(t, h)
		mustCreate(t, h.Store, queuedRun("run_1", base))
		if err := h.Store.AddQuestion(t.Context(), ask("confirm", base+1000)); err != nil {
			t.Fatal(err)
		}
		if err := h.Store.AddQuestion(t.Context(), ask("later", base+1000)); err != nil {
			t.Fatal(err)
		}
		ok, err := other.SaveAnswer(t.Context(), engine.SaveAnswerParams{RunID: "run_1", RequestID: "confirm",
			Response: json.RawMessage(`{"action":"accept"}`), Now: base + 20})
		if err != nil || !ok {
			t.Fatalf("SaveAnswer = %v, %v; want true", ok, err)
		}
		// A second answer does not overwrite the first.
		ok, err = other.SaveAnswer(t.Context(), engine.SaveAnswerParams{RunID: "run_1", RequestID: "confirm",
			Response: json.RawMessage(`{"action":"decline"}`), Now: base + 30})
		if err != nil || ok {
			t.Fatalf("second SaveAnswer = %v, %v; want false", ok, err)
		}
		// Asking again (a resumed run) keeps the stored answer.
		if err := h.Store.AddQuestion(t.Context(), ask("confirm", base+5000)); err != nil {
			t.Fatal(err)
		}
		got, err := h.Store.Questions(t.Context(), "run_1")
		if err != nil || len(got) != 2 {
			t.Fatalf("Questions = %v, %v", got, err)
		}
		if got[0].RequestID != "confirm" || got[0].ExpiresAt != base+1000 || got[0].AnsweredAt != base+20 {
			t.Errorf("answered request = %+v", got[0])
		}
		checkJSON(t, "response", got[0].Response, `{"action":"accept"}`)
		checkJSON(t, "request", got[1].Request, `{"method":"elicitation/create","params":{"message":"Delete it?"}}`)
		if got[1].Answered() || got[1].Message != "Delete it?" || got[1].Kind != "mcp" {
			t.Errorf("outstanding request = %+v", got[1])
		}
		_, err = h.Store.SaveAnswer(t.Context(), engine.SaveAnswerParams{RunID: "run_1", RequestID: "never", Response: json.RawMessage(`{}`), Now: base})
		checkErr(t, "SaveAnswer of a question never asked", err, engine.ErrNotFound)
		if none, err := h.Store.Questions(t.Context(), "run_x"); err != nil || len(none) != 0 {
			t.Errorf("Questions of an unknown run = %v, %v", none, err)
		}
	})
	t.Run("ExpiredIsNotAnswered", func(t *testing.T) {
		h := nh(t)
		mustCreate(t, h.Store, queuedRun("run_1", base))
		if err := h.Store.AddQuestion(t.Context(), ask("confirm", base+100)); err != nil {
			t.Fatal(err)
		}
		ok, err := h.Store.SaveAnswer(t.Context(), engine.SaveAnswerParams{RunID: "run_1", RequestID: "confirm",
			Response: json.RawMessage(`{"action":"accept"}`), Now: base + 100})
		if err != nil || ok {
			t.Fatalf("SaveAnswer at expiry = %v, %v; want false", ok, err)
		}
	})
	t.Run("OutstandingAndKeys", func(t *testing.T) {
		h := nh(t)
		other := peer(t, h)
		mustCreate(t, h.Store, queuedRun("run_1", base))
		mustCreate(t, h.Store, queuedRun("run_2", base))
		key1, key2 := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
		sec := ask("otp", base+1000)
		sec.Kind, sec.PublicKey = "secret", key1
		if err := h.Store.AddQuestion(t.Context(), sec); err != nil {
			t.Fatal(err)
		}
		second := ask("go", base+1000)
		second.RunID = "run_2"
		if err := h.Store.AddQuestion(t.Context(), second); err != nil {
			t.Fatal(err)
		}
		expired := ask("old", base+50)
		if err := h.Store.AddQuestion(t.Context(), expired); err != nil {
			t.Fatal(err)
		}
		// Asked again unanswered (a new process): the new key replaces the old.
		sec.PublicKey = key2
		if err := h.Store.AddQuestion(t.Context(), sec); err != nil {
			t.Fatal(err)
		}
		got, err := other.OutstandingQuestions(t.Context(), base+100)
		if err != nil || len(got) != 2 {
			t.Fatalf("OutstandingQuestions = %+v, %v; want otp and go", got, err)
		}
		byID := map[string]engine.Question{}
		for _, q := range got {
			byID[q.RunID+"/"+q.RequestID] = q
		}
		if q := byID["run_1/otp"]; !bytes.Equal(q.PublicKey, key2) || q.Kind != "secret" {
			t.Errorf("secret request = %+v, want the second key", q)
		}
		if q := byID["run_2/go"]; q.PublicKey != nil {
			t.Errorf("request without a key has %x", q.PublicKey)
		}
		if ok, err := other.SaveAnswer(t.Context(), engine.SaveAnswerParams{RunID: "run_1", RequestID: "otp",
			Response: json.RawMessage(`{"sealed":"AAAA"}`), Now: base + 200}); err != nil || !ok {
			t.Fatalf("SaveAnswer = %v, %v", ok, err)
		}
		// Asked again answered: the key and the answer stay.
		sec.PublicKey = key1
		if err := h.Store.AddQuestion(t.Context(), sec); err != nil {
			t.Fatal(err)
		}
		all, err := h.Store.Questions(t.Context(), "run_1")
		if err != nil || len(all) != 2 || !bytes.Equal(all[1].PublicKey, key2) || !all[1].Answered() {
			t.Fatalf("Questions = %+v, %v", all, err)
		}
		if got, err := h.Store.OutstandingQuestions(t.Context(), base+300); err != nil || len(got) != 1 || got[0].RequestID != "go" {
			t.Fatalf("OutstandingQuestions after the answer = %+v, %v", got, err)
		}
	})
}
