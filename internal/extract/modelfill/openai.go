package modelfill

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"
)

// Response formats an OpenAI-compatible server is asked for.
const (
	// FormatJSONObject asks for {"type":"json_object"} (JSON mode), which
	// OpenAI, Ollama, llama.cpp and vLLM all accept. The default.
	FormatJSONObject = "json_object"
	// FormatJSONSchema sends the restricted schema as a non-strict
	// {"type":"json_schema"} format, for servers that constrain output by
	// schema.
	FormatJSONSchema = "json_schema"
	// FormatNone sends no response_format: the prompt alone asks for JSON.
	FormatNone = "none"
)

// DefaultTimeout bounds one request to the model when OpenAIConfig.Timeout
// is zero: local models on a CPU answer slowly.
const DefaultTimeout = 2 * time.Minute

// OpenAIConfig configures an OpenAI-compatible chat-completions endpoint.
type OpenAIConfig struct {
	// BaseURL is the API root, e.g. "http://localhost:11434/v1" (Ollama),
	// "http://localhost:8080/v1" (llama.cpp) or "https://api.openai.com/v1".
	BaseURL string
	// Model is the model name the server knows, e.g. "llama3.2".
	Model string
	// APIKey is sent as a bearer token; empty sends none (local servers).
	// It is held in memory only: never logged, never in an error, and the
	// client never reads OPENAI_* environment variables.
	APIKey string
	// ResponseFormat is FormatJSONObject (the default), FormatJSONSchema or
	// FormatNone.
	ResponseFormat string
	// Timeout bounds one request (DefaultTimeout when zero).
	Timeout time.Duration
	// Retries is how many more times a request that met a 408, 409, 429 or
	// 5xx answer or a network error is sent, with backoff (0: none).
	Retries int
	// HTTPClient sends the requests (a client with Timeout when nil).
	HTTPClient *http.Client
	// MaxAnswerBytes caps a response body (DefaultMaxAnswerBytes when
	// zero): past it the request fails with ErrAnswerTooLarge.
	MaxAnswerBytes int64
	// Logger receives one debug record per request and a warning per
	// failure (nothing when nil); records carry the endpoint without
	// credentials, the model and token counts, never the key or the text.
	Logger *slog.Logger
}

// OpenAI is a Sampler over an OpenAI-compatible chat-completions API,
// built on the official client library (github.com/openai/openai-go),
// which handles retries and the wire format.
type OpenAI struct {
	svc      openai.ChatCompletionService
	model    string
	key      string
	endpoint string // scheme://host/path, for messages
	format   string
	log      *slog.Logger
	// maxAnswer caps a response body (MaxAnswerBytes).
	maxAnswer int64
}

// NewOpenAI checks cfg and returns the client. Errors name the field and
// never contain the key.
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	u, err := url.Parse(strings.TrimSpace(cfg.BaseURL))
	if err != nil || !u.IsAbs() || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("model base URL %q is not an absolute http(s) URL: give the API root, e.g. http://localhost:11434/v1", safeURL(cfg.BaseURL))
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("model name is required: give the name the server knows, e.g. llama3.2")
	}
	format := cfg.ResponseFormat
	switch format {
	case "":
		format = FormatJSONObject
	case FormatJSONObject, FormatJSONSchema, FormatNone:
	default:
		return nil, fmt.Errorf("model response format %q is not one of %s, %s, %s", format, FormatJSONObject, FormatJSONSchema, FormatNone)
	}
	if cfg.Retries < 0 {
		return nil, fmt.Errorf("model retries must be 0 or more, not %d", cfg.Retries)
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: timeout}
	}
	maxAnswer := cfg.MaxAnswerBytes
	if maxAnswer <= 0 {
		maxAnswer = DefaultMaxAnswerBytes
	}
	hc = cappedClient(hc, maxAnswer)
	opts := []option.RequestOption{
		option.WithBaseURL(u.String()),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(cfg.Retries),
		option.WithRequestTimeout(timeout),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &OpenAI{
		// The service is built from our options alone: openai.NewClient
		// would add OPENAI_API_KEY, OPENAI_BASE_URL and their kin from the
		// environment, sending a key meant for one server to another.
		svc:      openai.NewChatCompletionService(opts...),
		model:    strings.TrimSpace(cfg.Model),
		key:      cfg.APIKey,
		endpoint: safeURL(u.String()),
		format:   format,
		log:      log,

		maxAnswer: maxAnswer,
	}, nil
}

// String describes the client without its key.
func (o *OpenAI) String() string { return fmt.Sprintf("model %s at %s", o.model, o.endpoint) }

// Sample sends one chat completion (temperature 0) and returns the first
// choice with the usage the server reported.
func (o *OpenAI) Sample(ctx context.Context, req SampleRequest) (SampleResponse, error) {
	var msgs []openai.ChatCompletionMessageParamUnion
	if req.System != "" {
		msgs = append(msgs, openai.SystemMessage(req.System))
	}
	promptBytes := len(req.System)
	for _, m := range req.Messages {
		promptBytes += len(m.Content)
		if m.Role == "assistant" {
			msgs = append(msgs, openai.AssistantMessage(m.Content))
			continue
		}
		if len(m.Images) == 0 {
			msgs = append(msgs, openai.UserMessage(m.Content))
			continue
		}
		parts := []openai.ChatCompletionContentPartUnionParam{openai.TextContentPart(m.Content)}
		for _, img := range m.Images {
			promptBytes += len(img.Data)
			parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{
				URL: "data:" + img.MimeType + ";base64," + base64.StdEncoding.EncodeToString(img.Data)}))
		}
		msgs = append(msgs, openai.UserMessage(parts))
	}
	params := openai.ChatCompletionNewParams{
		Model:       shared.ChatModel(o.model),
		Messages:    msgs,
		Temperature: openai.Float(0),
	}
	if req.MaxTokens > 0 {
		params.MaxTokens = openai.Int(int64(req.MaxTokens))
	}
	switch o.format {
	case FormatJSONObject:
		params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONObject: &shared.ResponseFormatJSONObjectParam{}}
	case FormatJSONSchema:
		if req.Schema != nil {
			params.ResponseFormat = openai.ChatCompletionNewParamsResponseFormatUnion{OfJSONSchema: &shared.ResponseFormatJSONSchemaParam{
				JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "answer", Schema: req.Schema, Strict: openai.Bool(false)},
			}}
		}
	}
	o.log.Debug("model request", "endpoint", o.endpoint, "model", o.model, "messages", len(msgs), "promptBytes", promptBytes)
	start := time.Now()
	resp, err := o.svc.New(ctx, params)
	if err != nil {
		err = o.safeError(ctx, err)
		o.log.Warn("model request failed", "endpoint", o.endpoint, "model", o.model, "error", err.Error())
		return SampleResponse{}, err
	}
	if len(resp.Choices) == 0 {
		return SampleResponse{}, fmt.Errorf("%s answered with no choices", o)
	}
	out := SampleResponse{
		Text:             resp.Choices[0].Message.Content,
		Model:            resp.Model,
		PromptTokens:     resp.Usage.PromptTokens,
		CompletionTokens: resp.Usage.CompletionTokens,
	}
	if out.Model == "" {
		out.Model = o.model
	}
	o.log.Debug("model answer", "endpoint", o.endpoint, "model", out.Model, "promptTokens", out.PromptTokens,
		"completionTokens", out.CompletionTokens, "answerBytes", len(out.Text), "elapsed", time.Since(start).Round(time.Millisecond))
	return out, nil
}

// safeError turns a failed request into an error that names the endpoint,
// the HTTP status and the server's message with the key scrubbed out. The
// library's own error is not wrapped (its request holds the key);
// cancellation stays detectable with errors.Is.
func (o *OpenAI) safeError(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return fmt.Errorf("%s: request stopped: %w", o, ctxErr)
	}
	if errors.Is(err, ErrAnswerTooLarge) {
		return fmt.Errorf("%s answered more than the answer cap of %d bytes; nothing of it was kept (check the server, or its maximum output tokens): %w",
			o, o.maxAnswer, ErrAnswerTooLarge)
	}
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg := fmt.Sprintf("%s answered HTTP %d", o, apiErr.StatusCode)
		if apiErr.StatusCode == http.StatusUnauthorized || apiErr.StatusCode == http.StatusForbidden {
			// A server refusing the key may echo it in any spelling
			// (base64, upper case, reversed): none of its words are kept.
			return errors.New(msg + keyRefused)
		}
		if m := strings.TrimSpace(apiErr.Message); m != "" {
			msg += ": " + clipText(o.redact(m), 300)
		}
		switch apiErr.StatusCode {
		case http.StatusNotFound:
			msg += " (check the base URL, which must end at the API root such as /v1, and the model name)"
		}
		return errors.New(msg)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s did not answer in time: %w", o, context.DeadlineExceeded)
	}
	return fmt.Errorf("%s could not be reached: %s", o, clipText(o.redact(err.Error()), 300))
}

// keyRefused ends the error of a 401 or 403 answer: the fixed
// explanation that replaces the server's own words, which are never
// stored (a server may echo the key re-encoded, where no redaction finds
// it), naming where the key comes from.
const keyRefused = ": the server refused the API key (its message is not kept, as it may repeat the key); " +
	"check the key in the file given with --model-key-file (or BROWSERTASK_MODEL_KEY) and that it is meant for this endpoint"

// redact removes the key from s, and any word sharing its first six or
// last four characters, as servers echo masked keys ("sk-ab***wxyz").
func (o *OpenAI) redact(s string) string {
	if o.key == "" {
		return s
	}
	s = strings.ReplaceAll(s, o.key, "[redacted]")
	if len(o.key) < 12 {
		return s
	}
	head, tail := o.key[:6], o.key[len(o.key)-4:]
	return regexp.MustCompile(`\S+`).ReplaceAllStringFunc(s, func(w string) string {
		if strings.Contains(w, head) || strings.Contains(w, tail) {
			return "[redacted]"
		}
		return w
	})
}

// safeURL renders a URL without user info, query or fragment.
func safeURL(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return "(unparseable URL)"
	}
	u.User, u.RawQuery, u.Fragment, u.ForceQuery = nil, "", "", false
	return u.String()
}

// clipText shortens s to at most n runes, marking the cut with "…".
func clipText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
