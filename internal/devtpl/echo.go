// Package devtpl holds browserless templates for tests and benchmarks. They
// are registered only when the binary runs with --dev-templates, so users
// never see them by default.
package devtpl

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/browsertask/browsertask/engine"
)

// Echo is the "dev_echo" template: it processes items of sleepMs each
// (checkpointed, resumable), then optionally stores content as an artifact
// and fails on request. It never touches the browser. With Once set it is
// "dev_echo_once", the same work declared not resumable, so an interrupted
// run fails with EXECUTION_ERROR instead of resuming.
type Echo struct {
	Once bool
}

var _ engine.Template = Echo{}

type echoInputs struct {
	SleepMs       int    `json:"sleepMs"`
	Items         int    `json:"items"`
	Content       string `json:"content"`
	ContentBase64 string `json:"contentBase64"`
	MimeType      string `json:"mimeType"`
	Fail          bool   `json:"fail"`
	// PanicAtItem (1-based) panics when that item starts: proves a panic
	// in a template fails only its run.
	PanicAtItem int `json:"panicAtItem"`
	// ExitAtItem (1-based) ends the whole process with status 2 when that
	// item starts: a run that crashes its process, for the poison-run cap.
	ExitAtItem int `json:"exitAtItem"`
	// Pages puts that many page-like entries in the result ({url, title,
	// text} with textBytes characters of text): a large result without a
	// browser, for the reply budget's tests.
	Pages     int `json:"pages"`
	TextBytes int `json:"textBytes"`
}

// Info describes dev_echo.
func (e Echo) Info() engine.TemplateInfo {
	id := "dev_echo"
	if e.Once {
		id = "dev_echo_once"
	}
	return engine.TemplateInfo{
		TemplateID: id, Version: 1, Versions: []int{1},
		Title:       "Echo (development)",
		Description: "Development template: sleeps sleepMs per item for items items, then stores content (or contentBase64) as an artifact of mimeType; panicAtItem panics and exitAtItem ends the process at that item (1-based); pages adds that many page-like entries with textBytes of text to the result. For tests and benchmarks; never touches the browser.",
		InputSchema: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{
			"sleepMs":{"type":"integer","minimum":0,"maximum":600000},
			"items":{"type":"integer","minimum":1,"maximum":100000},
			"content":{"type":"string"},
			"contentBase64":{"type":"string","contentEncoding":"base64"},
			"mimeType":{"type":"string","minLength":1},
			"fail":{"type":"boolean"},
			"panicAtItem":{"type":"integer","minimum":1},
			"exitAtItem":{"type":"integer","minimum":1},
			"pages":{"type":"integer","minimum":0,"maximum":100000},
			"textBytes":{"type":"integer","minimum":0,"maximum":100000}}}`),
		ResultSchema:       json.RawMessage(`{"type":"object"}`),
		TrustLevel:         "any",
		Resumable:          !e.Once,
		EstimatedStepsHint: "items",
		Examples:           []json.RawMessage{json.RawMessage(`{"sleepMs":10,"items":3,"content":"hello","mimeType":"text/plain"}`)},
	}
}

// Check has nothing beyond the schema to check.
func (Echo) Check(json.RawMessage, engine.Profile) error { return nil }

// Run sleeps per item, checkpointing each, and writes the artifact.
func (Echo) Run(ctx context.Context, env engine.Env) (*engine.Outcome, error) {
	var in echoInputs
	if err := json.Unmarshal(env.Inputs(), &in); err != nil {
		return nil, engine.Errorf(engine.InvalidParameter, "inputs: %v", err)
	}
	if in.Items == 0 {
		in.Items = 1
	}
	done := env.FinishedItems()
	for i := 0; i < in.Items; i++ {
		key := fmt.Sprintf("item-%d", i)
		if _, ok := done[key]; ok {
			continue
		}
		if in.PanicAtItem == i+1 {
			panic(fmt.Sprintf("dev_echo was asked to panic at item %d", i+1))
		}
		if in.ExitAtItem == i+1 {
			env.Logger().Error("dev_echo was asked to end the process", "item", i+1)
			os.Exit(2)
		}
		if in.SleepMs > 0 {
			if err := sleep(ctx, in.SleepMs); err != nil {
				return nil, err
			}
		}
		it := engine.Item{Index: i, Key: key, Status: engine.ItemSucceeded}
		if err := env.Checkpoint(ctx, it, engine.Progress{DoneSteps: i + 1, TotalSteps: in.Items}); err != nil {
			return nil, err
		}
	}
	if in.Fail {
		return nil, engine.Errorf(engine.StepExecutionFailed, "dev_echo was asked to fail").WithDetails(map[string]any{"stepIndex": 0})
	}
	res := map[string]any{"items": in.Items}
	if in.Pages > 0 {
		res["pages"] = fakePages(in.Pages, in.TextBytes)
	}
	data := []byte(in.Content)
	if in.ContentBase64 != "" {
		b, err := base64.StdEncoding.DecodeString(in.ContentBase64)
		if err != nil {
			return nil, engine.Errorf(engine.InvalidParameter, "inputs.contentBase64: %v", err)
		}
		data = b
	}
	if len(data) > 0 {
		mime := in.MimeType
		if mime == "" {
			mime = "text/plain; charset=utf-8"
		}
		id, err := env.PutArtifact(ctx, "content", mime, data)
		if err != nil {
			return nil, err
		}
		res["artifactId"] = id
	}
	return &engine.Outcome{Result: res}, nil
}

// fakePages are n page-like result entries with textBytes of text each.
func fakePages(n, textBytes int) []map[string]any {
	out := make([]map[string]any, n)
	for i := range out {
		out[i] = map[string]any{"url": fmt.Sprintf("https://docs.example.test/page/%d", i+1),
			"title": fmt.Sprintf("Page %d", i+1), "text": strings.Repeat("x", textBytes)}
	}
	return out
}
