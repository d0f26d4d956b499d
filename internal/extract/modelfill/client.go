package modelfill

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/browsertask/browsertask/engine"
)

// ClientSampler asks the model of the MCP client that started the run:
// each question becomes an input request of the run whose MCP form is
// sampling/createMessage. The run waits for it like for any question
// (engine/ask.go): a 2025-11-25 task's client gets it on tasks/result
// (with the related-task metadata), a synchronous call's client during the
// call, and a 2026-07-28 task lists it in tasks/get's inputRequests and
// takes the answer from tasks/update. The client shows the request to its
// user as it sees fit; its answer reports no token counts, so only the
// calls are counted.
type ClientSampler struct {
	ask Asker
}

// Asker is what ClientSampler needs of a run: engine.Env's Ask.
type Asker interface {
	Ask(ctx context.Context, q engine.Question) (json.RawMessage, error)
}

var _ Sampler = (*ClientSampler)(nil)

// NewClientSampler returns a Sampler that asks through a.
func NewClientSampler(a Asker) *ClientSampler { return &ClientSampler{ask: a} }

// samplingText is a text content block of sampling/createMessage.
type samplingText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// samplingMessage is one message of sampling/createMessage: its content
// is one text block, or (with images, MCP 2025-11-25) a list of blocks.
type samplingMessage struct {
	Role    string `json:"role"`
	Content any    `json:"content"`
}

// samplingImage is an image content block of sampling/createMessage.
type samplingImage struct {
	Type     string `json:"type"`
	Data     string `json:"data"`
	MimeType string `json:"mimeType"`
}

// createMessageParams are the params of sampling/createMessage (MCP
// 2025-11-25 and 2026-07-28).
type createMessageParams struct {
	Messages       []samplingMessage `json:"messages"`
	SystemPrompt   string            `json:"systemPrompt,omitempty"`
	IncludeContext string            `json:"includeContext"`
	MaxTokens      int               `json:"maxTokens"`
}

// SamplingQuestion is the message of the input request a ClientSampler
// stores: what a person sees on the dashboard and in progress.message.
const SamplingQuestion = "the client's model, for properties the page's own data did not give (sampling/createMessage)"

// Sample asks the client's model. The request id is derived from the
// request, so a run resumed after a crash that asks the same again gets
// the answer already given. Errors: the run's (cancel, no answer in time),
// a client that refused (its message), an answer without text.
func (c *ClientSampler) Sample(ctx context.Context, req SampleRequest) (SampleResponse, error) {
	p := createMessageParams{SystemPrompt: req.System, IncludeContext: "none", MaxTokens: req.MaxTokens}
	if p.MaxTokens <= 0 {
		p.MaxTokens = DefaultAnswerTokens
	}
	for _, m := range req.Messages {
		var content any = samplingText{Type: "text", Text: m.Content}
		if len(m.Images) > 0 {
			blocks := []any{content}
			for _, img := range m.Images {
				blocks = append(blocks, samplingImage{Type: "image", Data: base64.StdEncoding.EncodeToString(img.Data), MimeType: img.MimeType})
			}
			content = blocks
		}
		p.Messages = append(p.Messages, samplingMessage{Role: m.Role, Content: content})
	}
	params, err := json.Marshal(p)
	if err != nil {
		return SampleResponse{}, fmt.Errorf("encode the sampling request: %v", err)
	}
	raw, err := json.Marshal(map[string]any{"method": "sampling/createMessage", "params": json.RawMessage(params)})
	if err != nil {
		return SampleResponse{}, fmt.Errorf("encode the sampling request: %v", err)
	}
	sum := sha256.Sum256(params)
	answer, err := c.ask.Ask(ctx, engine.Question{
		RequestID: "sample-" + hex.EncodeToString(sum[:8]),
		Kind:      engine.QuestionMCP,
		Message:   SamplingQuestion,
		Request:   raw,
	})
	if err != nil {
		return SampleResponse{}, err
	}
	return readCreateMessageResult(answer)
}

// readCreateMessageResult reads the text of a CreateMessageResult: content
// is one block or (2025-11-25 and later) a list of blocks; the text blocks
// are joined.
func readCreateMessageResult(raw json.RawMessage) (SampleResponse, error) {
	if msg, ok := engine.SamplingRefused(raw); ok {
		return SampleResponse{}, fmt.Errorf("the client did not answer the sampling request: %s", msg)
	}
	var res struct {
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return SampleResponse{}, fmt.Errorf("the client's sampling answer is not a CreateMessageResult: %v", err)
	}
	var blocks []samplingText
	var one samplingText
	switch {
	case json.Unmarshal(res.Content, &one) == nil && one.Type != "":
		blocks = []samplingText{one}
	case json.Unmarshal(res.Content, &blocks) == nil:
	default:
		return SampleResponse{}, errors.New("the client's sampling answer has no content")
	}
	var text []string
	for _, b := range blocks {
		if b.Type == "text" {
			text = append(text, b.Text)
		}
	}
	if len(text) == 0 {
		return SampleResponse{}, errors.New("the client's sampling answer has no text content")
	}
	return SampleResponse{Text: strings.Join(text, "\n"), Model: res.Model}, nil
}
