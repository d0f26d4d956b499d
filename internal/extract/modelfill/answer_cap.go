package modelfill

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// A model's answer is bounded: a server answering 50 MB (a broken or
// hostile endpoint) would otherwise be read whole, parsed, kept and sent
// back to the model in the retry prompt. The OpenAI client reads at most
// MaxAnswerBytes of a response body and fails with ErrAnswerTooLarge past
// them; Fill refuses an answer text over MaxAnswerBytes from any sampler
// (the MCP client's model too) with the same error, without asking again,
// and echoes at most maxEchoBytes of an invalid answer in its retry.

// DefaultMaxAnswerBytes caps a model's answer (the HTTP response body of
// an OpenAI-compatible server, and the answer text of any sampler) when
// OpenAIConfig.MaxAnswerBytes or Request.MaxAnswerBytes is zero: 1 MiB,
// far above what DefaultAnswerTokens of JSON takes.
const DefaultMaxAnswerBytes = 1 << 20

// maxEchoBytes is how much of an answer that did not validate is shown to
// the model again in the retry; a longer one is cut with a note.
const maxEchoBytes = 16 << 10

// ErrAnswerTooLarge is the error (errors.Is) of an answer over the cap.
var ErrAnswerTooLarge = errors.New("the model's answer is larger than the answer cap")

// capTransport limits every response body read through it to max bytes.
type capTransport struct {
	base http.RoundTripper
	max  int64
}

func (c capTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	resp.Body = &cappedBody{rc: resp.Body, left: c.max, max: c.max}
	return resp, nil
}

// cappedBody reads at most max bytes, then fails with ErrAnswerTooLarge
// (io.EOF when the body ends exactly at the cap).
type cappedBody struct {
	rc        io.ReadCloser
	left, max int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One more byte tells a body of exactly max bytes from a longer one.
		var one [1]byte
		if n, err := b.rc.Read(one[:]); n == 0 && err != nil {
			return 0, err
		}
		return 0, fmt.Errorf("%w (%d bytes)", ErrAnswerTooLarge, b.max)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }

// cappedClient is hc sending through capTransport (a copy: hc itself is
// left as it is).
func cappedClient(hc *http.Client, max int64) *http.Client {
	out := *hc
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	out.Transport = capTransport{base: base, max: max}
	return &out
}

// echoAnswer is the answer as the retry shows it to the model.
func echoAnswer(text string) string {
	if len(text) <= maxEchoBytes {
		return text
	}
	return clipText(text[:maxEchoBytes], maxEchoBytes) + fmt.Sprintf("\n[answer of %d bytes cut here]", len(text))
}

// answerCap is req's cap on an answer's text.
func answerCap(req Request) int {
	if req.MaxAnswerBytes > 0 {
		return req.MaxAnswerBytes
	}
	return DefaultMaxAnswerBytes
}
