package modelfill

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/browsertask/browsertask/engine"
)

// askerFunc answers questions with a function.
type askerFunc func(engine.Question) (json.RawMessage, error)

func (f askerFunc) Ask(_ context.Context, q engine.Question) (json.RawMessage, error) {
	return f(q)
}

// TestClientSamplerRequestAndAnswers: the question is sampling/createMessage
// with the conversation as text messages, a request id that depends only
// on the request (a resumed run gets the stored answer), and the answer's
// text is read from one content block or a list of them; a refusal fails.
func TestClientSamplerRequestAndAnswers(t *testing.T) {
	var got []engine.Question
	answer := `{"role":"assistant","model":"m1","content":{"type":"text","text":"{\"a\":1}"}}`
	s := NewClientSampler(askerFunc(func(q engine.Question) (json.RawMessage, error) {
		got = append(got, q)
		return json.RawMessage(answer), nil
	}))
	req := SampleRequest{System: "sys", Messages: []Message{{Role: "user", Content: "page text"}}, MaxTokens: 300}
	resp, err := s.Sample(context.Background(), req)
	if err != nil || resp.Text != `{"a":1}` || resp.Model != "m1" || resp.PromptTokens != 0 {
		t.Fatalf("Sample = %+v, %v", resp, err)
	}
	want := `{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"page text"}}],"systemPrompt":"sys","includeContext":"none","maxTokens":300}}`
	if string(got[0].Request) != want || got[0].Kind != engine.QuestionMCP || !strings.HasPrefix(got[0].RequestID, "sample-") {
		t.Fatalf("question %s %s %s", got[0].Kind, got[0].RequestID, got[0].Request)
	}
	if _, err := s.Sample(context.Background(), req); err != nil || got[1].RequestID != got[0].RequestID {
		t.Fatalf("the same request asked again has id %q, want %q (%v)", got[1].RequestID, got[0].RequestID, err)
	}
	req.Messages[0].Content = "other page"
	if _, err := s.Sample(context.Background(), req); err != nil || got[2].RequestID == got[0].RequestID {
		t.Fatalf("another request kept the id %q (%v)", got[2].RequestID, err)
	}

	answer = `{"role":"assistant","model":"m2","content":[{"type":"text","text":"{\"a\":"},{"type":"image","data":"","mimeType":"image/png"},{"type":"text","text":"2}"}]}`
	if resp, err := s.Sample(context.Background(), req); err != nil || resp.Text != "{\"a\":\n2}" {
		t.Fatalf("list content: %+v, %v", resp, err)
	}
	answer = `{"role":"assistant","model":"m3","content":{"type":"image","data":"","mimeType":"image/png"}}`
	if _, err := s.Sample(context.Background(), req); err == nil || !strings.Contains(err.Error(), "no text") {
		t.Fatalf("image-only answer: %v", err)
	}
	answer = string(engine.SamplingRefusal("User rejected sampling request"))
	if _, err := s.Sample(context.Background(), req); err == nil || !strings.Contains(err.Error(), "User rejected sampling request") {
		t.Fatalf("refusal: %v", err)
	}
}

// TestClientSamplerSendsImages: a message with images becomes a list of
// content blocks, its text first, then each image base64-encoded with its
// mime type (sampling/createMessage, MCP 2025-11-25).
func TestClientSamplerSendsImages(t *testing.T) {
	var got json.RawMessage
	s := NewClientSampler(askerFunc(func(q engine.Question) (json.RawMessage, error) {
		got = q.Request
		return json.RawMessage(`{"role":"assistant","model":"m","content":{"type":"text","text":"ok"}}`), nil
	}))
	_, err := s.Sample(context.Background(), SampleRequest{Messages: []Message{{Role: "user", Content: "look",
		Images: []Image{{MimeType: "image/png", Data: []byte("\x89PNG")}}}}})
	if err != nil {
		t.Fatal(err)
	}
	var req struct {
		Params struct {
			Messages []struct {
				Content []map[string]string `json:"content"`
			} `json:"messages"`
		} `json:"params"`
	}
	if err := json.Unmarshal(got, &req); err != nil || len(req.Params.Messages) != 1 {
		t.Fatalf("request %s: %v", got, err)
	}
	c := req.Params.Messages[0].Content
	if len(c) != 2 || c[0]["type"] != "text" || c[0]["text"] != "look" || c[1]["type"] != "image" || c[1]["mimeType"] != "image/png" || c[1]["data"] != "iVBORw==" {
		t.Fatalf("content blocks %v", c)
	}
}
