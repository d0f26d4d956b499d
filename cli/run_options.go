package cli

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/browsertask/browsertask/engine"
)

// runOptions are run_task_template's options as `browsertask run` takes
// them: --options FILE|JSON gives them as one object (the MCP shape:
// mode, timeoutMs, idempotencyKey, outputSchema), and the single flags
// (--mode, --timeout, --idempotency-key, --output-schema) win over it, so
// a saved options file can be reused with one value changed.
type runOptions struct {
	options      string // --options FILE|JSON|-
	outputSchema string // --output-schema FILE|JSON|-
	mode         string
	timeout      time.Duration
	idemKey      string
	render       string
	profile      string
	async        bool
}

// define registers the option flags on fs.
func (o *runOptions) define(fs *flag.FlagSet) {
	fs.StringVar(&o.options, "options", "", `run options as a JSON object or a FILE holding one (- for stdin): {"mode","timeoutMs","idempotencyKey","outputSchema"}`)
	fs.StringVar(&o.outputSchema, "output-schema", "", "options.outputSchema (extract_structured): a JSON Schema object inline or a FILE holding one (- for stdin)")
	fs.StringVar(&o.mode, "mode", "", "sync (wait here, the default) or async (print the runId and return, as --async); auto waits here too")
	fs.DurationVar(&o.timeout, "timeout", 0, "bound on the running phase, e.g. 2m (default: the profile's timeout); options.timeoutMs")
	fs.StringVar(&o.idemKey, "idempotency-key", "", "submitting again with the same key returns the same run instead of starting another (options.idempotencyKey)")
	fs.StringVar(&o.render, "render", "", "inputs.render for templates that have it: browser, http or auto")
	fs.StringVar(&o.profile, "profile", "", "run in the browser profile NAME, signed in as a person left it (browsertask profiles list); not with --session")
	fs.BoolVar(&o.async, "async", false, "print the runId and return at once")
}

// fileOptions is the --options object as MCP clients send it.
type fileOptions struct {
	Mode           engine.Mode     `json:"mode"`
	TimeoutMs      int64           `json:"timeoutMs"`
	IdempotencyKey string          `json:"idempotencyKey"`
	OutputSchema   json.RawMessage `json:"outputSchema"`
}

// apply fills req's options from --options then the single flags. It
// returns whether the run is async. Stdin ("-") may be read by one flag
// only; stdinUsed says --inputs took it already. Errors name the flag and,
// for malformed JSON, where it is malformed.
func (o *runOptions) apply(req *engine.SubmitRequest, stdin io.Reader, stdinUsed bool) (bool, error) {
	if o.options != "" {
		b, err := jsonArg("--options", o.options, stdin, &stdinUsed)
		if err != nil {
			return false, err
		}
		var f fileOptions
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			return false, fmt.Errorf("--options: %s (the keys are mode, timeoutMs, idempotencyKey, outputSchema)", jsonProblem(b, err))
		}
		req.Mode, req.TimeoutMs, req.IdempotencyKey, req.OutputSchema = f.Mode, f.TimeoutMs, f.IdempotencyKey, f.OutputSchema
	}
	if o.outputSchema != "" {
		b, err := jsonArg("--output-schema", o.outputSchema, stdin, &stdinUsed)
		if err != nil {
			return false, err
		}
		req.OutputSchema = b
	}
	if o.timeout != 0 {
		if o.timeout < time.Millisecond {
			return false, fmt.Errorf("--timeout must be at least 1ms, e.g. 90s or 5m; got %v", o.timeout)
		}
		req.TimeoutMs = o.timeout.Milliseconds()
	}
	if o.idemKey != "" {
		req.IdempotencyKey = o.idemKey
	}
	if o.profile != "" {
		req.Profile = o.profile
	}
	switch m := engine.Mode(o.mode); m {
	case "":
	case engine.ModeSync, engine.ModeAsync, engine.ModeAuto:
		req.Mode = m
	default:
		return false, fmt.Errorf("--mode must be sync, async or auto, got %q", o.mode)
	}
	if o.async {
		req.Mode = engine.ModeAsync
	}
	// The terminal waits for the run whatever the budget of auto mode:
	// a person at a terminal asked to see it end (auto is for clients
	// that must answer within a time).
	if req.Mode == "" || req.Mode == engine.ModeAuto {
		req.Mode = engine.ModeSync
	}
	return req.Mode == engine.ModeAsync, nil
}

// setRender puts --render into the inputs, refusing it for templates
// without a render input (the field and the fix named).
func (o *runOptions) setRender(inputs json.RawMessage, tplID string, schema json.RawMessage) (json.RawMessage, error) {
	if o.render == "" {
		return inputs, nil
	}
	s, err := parseInputSchema(schema)
	if err != nil {
		return nil, err
	}
	if _, ok := s.props["render"]; !ok {
		return nil, fmt.Errorf("--render: %s has no render input (batch_extract_pages, crawl_site and extract_structured have one)", tplID)
	}
	var doc map[string]any
	if err := json.Unmarshal(inputs, &doc); err != nil {
		return nil, err
	}
	doc["render"] = o.render
	return json.Marshal(doc)
}

// jsonArg reads a FILE|JSON argument: inline JSON when it starts with {
// or [, stdin for "-", else the named file. The bytes must be one JSON
// value; a syntax error says where (line and column).
func jsonArg(flagName, arg string, stdin io.Reader, stdinUsed *bool) (json.RawMessage, error) {
	trimmed := strings.TrimSpace(arg)
	var b []byte
	src := "inline JSON"
	switch {
	case strings.HasPrefix(trimmed, "{") || strings.HasPrefix(trimmed, "["):
		b = []byte(trimmed)
	case trimmed == "-":
		if *stdinUsed {
			return nil, fmt.Errorf("%s -: stdin is already read by another flag; give a FILE instead", flagName)
		}
		*stdinUsed = true
		var err error
		if b, err = io.ReadAll(stdin); err != nil {
			return nil, fmt.Errorf("%s: read stdin: %w", flagName, err)
		}
		src = "stdin"
	default:
		var err error
		if b, err = os.ReadFile(arg); err != nil {
			return nil, fmt.Errorf("%s: %v (give a JSON object inline, starting with {, or a file holding one)", flagName, err)
		}
		src = arg
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, fmt.Errorf("%s: %s is not valid JSON: %s", flagName, src, jsonProblem(b, err))
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return nil, fmt.Errorf("%s: %s", flagName, jsonProblem(b, err))
	}
	return out.Bytes(), nil
}

// usesStdin reports whether an option flag reads stdin, which then cannot
// be a terminal to prompt on.
func (o *runOptions) usesStdin() bool { return o.options == "-" || o.outputSchema == "-" }
