// Package modelfill asks a model for the properties of a caller's output
// schema that a page's own data did not give (package structured fills
// the rest). It never needs a model: without a Sampler nothing is asked.
//
// A Sampler is anything that answers a short conversation with text: the
// OpenAI-compatible client of this package (OpenAI; a local Ollama or
// llama.cpp server works with no account), or the MCP layer's client
// sampling. Fill shows the model the page's compact text cut to a token
// budget, the schema restricted to the missing properties and the
// caller's instruction, demands one JSON object, validates it, and asks
// once more with the validation messages when it does not validate.
//
// It keeps the name modelfill under internal/extract rather than the
// shorter "model": its callers (templates, cli) hold the configured
// Sampler in variables and parameters named model, which would shadow
// a package of that name exactly where it is used.
package modelfill

import "context"

// Message is one turn of a conversation with a model.
type Message struct {
	// Role is "user" or "assistant".
	Role string `json:"role"`
	// Content is the turn's text.
	Content string `json:"content"`
	// Images go with a user turn's text (a screenshot the agent_task's
	// model asked for); models without vision may refuse them.
	Images []Image `json:"-"`
}

// Image is a picture sent with a message.
type Image struct {
	// MimeType is e.g. "image/png".
	MimeType string
	Data     []byte
}

// SampleRequest is one question to a model.
type SampleRequest struct {
	// System is the system prompt.
	System string
	// Messages is the conversation, oldest first; the last is the user's.
	Messages []Message
	// MaxTokens bounds the answer (0: the sampler's default).
	MaxTokens int
	// Schema is the JSON Schema the answer must follow, for samplers that
	// can constrain their output; the prompt states it too.
	Schema map[string]any
}

// SampleResponse is a model's answer.
type SampleResponse struct {
	// Text is the answer.
	Text string
	// Model names the model that answered, when known.
	Model string
	// PromptTokens and CompletionTokens are the token counts the model
	// reported (0 when it reports none).
	PromptTokens     int64
	CompletionTokens int64
}

// Sampler answers a conversation with a model. Implementations must not
// put credentials in errors or logs.
type Sampler interface {
	Sample(ctx context.Context, req SampleRequest) (SampleResponse, error)
}
