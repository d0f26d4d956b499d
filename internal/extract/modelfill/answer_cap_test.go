package modelfill

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestOversizedAnswerRefused (issue 26 item 10): a server answering 3 MiB
// (over the 1 MiB cap) fails the fill with ErrAnswerTooLarge after one
// request: the answer is neither kept in the error nor sent back to the
// model in a retry (before the cap it was read whole and echoed).
func TestOversizedAnswerRefused(t *testing.T) {
	huge := `{"material": "` + strings.Repeat("A", 3<<20) + `"}`
	srv, client := newScripted(t, FormatJSONObject, nil, huge, huge)
	s, page, ex := ogPage(t)
	_, err := Fill(context.Background(), client, Request{Schema: s, Known: ex.Object, Missing: ex.Missing, PageText: page.Text()})
	if !errors.Is(err, ErrAnswerTooLarge) {
		t.Fatalf("err = %v, want ErrAnswerTooLarge", err)
	}
	if n := len(srv.requests()); n != 1 {
		t.Fatalf("%d requests, want 1 (no retry echoing the answer)", n)
	}
	if msg := err.Error(); len(msg) > 400 || strings.Contains(msg, "AAAA") || !strings.Contains(msg, "1048576") {
		t.Fatalf("error (%d bytes): %.400s", len(msg), msg)
	}
}

// TestLongInvalidAnswerEchoCut: an answer under the cap that does not
// validate is shown again in the retry cut to 16 KiB with a note.
func TestLongInvalidAnswerEchoCut(t *testing.T) {
	long := "not json " + strings.Repeat("B", 200<<10)
	srv, client := newScripted(t, FormatJSONObject, nil, long, `{"material": "wood", "warrantyYears": 1}`)
	s, page, ex := ogPage(t)
	res, err := Fill(context.Background(), client, Request{Schema: s, Known: ex.Object, Missing: ex.Missing, PageText: page.Text()})
	if err != nil || res.Calls != 2 {
		t.Fatalf("fill: %v (%+v)", err, res)
	}
	msgs := srv.requests()[1].messages(t)
	echo := msgs[len(msgs)-2]
	if echo.Role != "assistant" || len(echo.Content) > maxEchoBytes+100 || !strings.Contains(echo.Content, "[answer of 204809 bytes cut here]") {
		t.Fatalf("echo: role %s, %d bytes, tail %q", echo.Role, len(echo.Content), echo.Content[max(0, len(echo.Content)-60):])
	}
}

// bigSampler answers any question with n bytes.
type bigSampler struct {
	n, calls int
}

func (b *bigSampler) Sample(context.Context, SampleRequest) (SampleResponse, error) {
	b.calls++
	return SampleResponse{Text: strings.Repeat("x", b.n)}, nil
}

// TestAnswerCapAnySampler: the cap holds for samplers that are not HTTP
// (the MCP client's model): one call, ErrAnswerTooLarge.
func TestAnswerCapAnySampler(t *testing.T) {
	s, page, ex := ogPage(t)
	b := &bigSampler{n: DefaultMaxAnswerBytes + 1}
	_, err := Fill(context.Background(), b, Request{Schema: s, Known: ex.Object, Missing: ex.Missing, PageText: page.Text()})
	if !errors.Is(err, ErrAnswerTooLarge) || b.calls != 1 {
		t.Fatalf("err = %v after %d calls", err, b.calls)
	}
}
