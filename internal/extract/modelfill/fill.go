package modelfill

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/browsertask/browsertask/internal/extract/structured"
)

// DefaultPageTokens is the page-text budget when Request.PageTokens is
// zero. Tokens are approximated as bytes/4 (the usual rule of thumb for
// English text with BPE tokenizers), so the page text shown to the model
// is cut to PageTokens*4 bytes, at a line end when one is near. About
// 6,000 tokens keeps the prompt under 8k tokens with the schema, which
// small local models (8k context) can take.
const DefaultPageTokens = 6000

// DefaultAnswerTokens bounds the model's answer when
// Request.MaxAnswerTokens is zero.
const DefaultAnswerTokens = 1024

// systemPrompt tells the model its job.
const systemPrompt = "You extract data from one web page. Answer with a single JSON object and nothing else: " +
	"no prose, no code fences. Use only what the page states; never guess. " +
	"Use null for a property the page does not state."

// Request is what Fill needs for one page.
type Request struct {
	// Schema is the caller's whole output schema.
	Schema *structured.Schema
	// Known is what deterministic sources filled (structured.Result's
	// Object); Fill does not modify it.
	Known map[string]any
	// Missing lists the dot paths to ask for (structured.Result's
	// Missing). Nothing is asked when it is empty.
	Missing []string
	// PageText is the page's readable text (structured.Page.Text).
	PageText string
	// PageURL is shown to the model with the text.
	PageURL string
	// Instruction is the caller's optional instruction.
	Instruction string
	// PageTokens is the page-text budget in tokens (DefaultPageTokens
	// when zero; see there for how tokens are counted).
	PageTokens int
	// MaxAnswerTokens bounds each answer (DefaultAnswerTokens when zero).
	MaxAnswerTokens int
	// MaxAnswerBytes caps each answer's text (DefaultMaxAnswerBytes when
	// zero): a longer answer fails Fill with ErrAnswerTooLarge.
	MaxAnswerBytes int
}

// Result is what the model added.
type Result struct {
	// Object is Known plus every value the model gave that coerced and
	// validated (a new map).
	Object map[string]any
	// Filled lists the paths the model filled, in order.
	Filled []string
	// Sources maps each filled path to "model:NAME" (the model that
	// answered), in the form of structured.Result.Sources.
	Sources map[string]string
	// Missing lists the asked paths still without a value.
	Missing []string
	// Problems are the validation messages of the last answer when it
	// still did not validate after the retry (empty when it did).
	Problems []string
	// Calls is how many times the model was asked (0, 1 or 2).
	Calls int
	// PromptTokens and CompletionTokens add up the usage of every call.
	PromptTokens     int64
	CompletionTokens int64
}

// Fill asks s for the missing properties of one page: one question, and
// one retry carrying the validation messages when the first answer is
// not a JSON object that validates against the schema restricted to the
// missing properties. Values the model gives are coerced like the
// deterministic ones (structured.Schema.CoerceValue); null means "the page
// does not say". Fill returns an error only when the model could not be
// asked (s failed or ctx ended); an answer that stays invalid is reported
// in Result.Problems with whatever valid values it held kept.
func Fill(ctx context.Context, s Sampler, req Request) (*Result, error) {
	res := &Result{Object: cloneMap(req.Known), Sources: map[string]string{}}
	missing := append([]string(nil), req.Missing...)
	sort.Strings(missing)
	if len(missing) == 0 {
		return res, nil
	}
	if s == nil {
		return nil, errors.New("no model configured to fill the missing properties")
	}
	if req.Schema == nil {
		return nil, errors.New("modelfill: Request.Schema is required")
	}
	restricted := req.Schema.Restrict(missing)
	rawRestricted, err := json.Marshal(restricted)
	if err != nil {
		return nil, fmt.Errorf("modelfill: restricted schema: %v", err)
	}
	answerSchema, err := structured.Compile(rawRestricted, "answer")
	if err != nil {
		return nil, fmt.Errorf("modelfill: the missing properties %s do not form a schema: %v", strings.Join(missing, ", "), err)
	}
	maxTokens := req.MaxAnswerTokens
	if maxTokens <= 0 {
		maxTokens = DefaultAnswerTokens
	}
	msgs := []Message{{Role: "user", Content: buildPrompt(req, rawRestricted)}}
	accepted := map[string]any{}
	var model string
	for attempt := 1; attempt <= 2; attempt++ {
		resp, err := s.Sample(ctx, SampleRequest{System: systemPrompt, Messages: msgs, MaxTokens: maxTokens, Schema: restricted})
		if err != nil {
			return nil, err
		}
		res.Calls++
		res.PromptTokens += resp.PromptTokens
		res.CompletionTokens += resp.CompletionTokens
		if limit := answerCap(req); len(resp.Text) > limit {
			return nil, fmt.Errorf("the model answered %d bytes, more than the answer cap of %d; nothing of it was kept and it was not asked again: %w",
				len(resp.Text), limit, ErrAnswerTooLarge)
		}
		if resp.Model != "" {
			model = resp.Model
		}
		values, problems := readAnswer(req.Schema, answerSchema, missing, resp.Text)
		for p, v := range values {
			accepted[p] = v
		}
		res.Problems = problems
		if len(problems) == 0 {
			break
		}
		msgs = append(msgs,
			Message{Role: "assistant", Content: echoAnswer(resp.Text)},
			Message{Role: "user", Content: retryPrompt(problems)})
	}
	label := "model"
	if model != "" {
		label = "model:" + model
	}
	for _, p := range missing {
		v, ok := accepted[p]
		if !ok {
			res.Missing = append(res.Missing, p)
			continue
		}
		setPath(res.Object, p, v)
		res.Filled = append(res.Filled, p)
		res.Sources[p] = label
	}
	return res, nil
}

// buildPrompt writes the question: what to fill (the restricted schema),
// the instruction, and the page text cut to the budget.
func buildPrompt(req Request, schema []byte) string {
	budget := req.PageTokens
	if budget <= 0 {
		budget = DefaultPageTokens
	}
	text, cut := CutToTokens(req.PageText, budget)
	var b strings.Builder
	b.WriteString("Fill the properties of this JSON Schema from the web page below. ")
	b.WriteString("Answer with one JSON object that validates against it; use null for a property the page does not state.\n\n")
	b.WriteString("JSON Schema:\n")
	b.Write(schema)
	b.WriteString("\n\n")
	if ins := strings.TrimSpace(req.Instruction); ins != "" {
		b.WriteString("Instruction from the user: " + ins + "\n\n")
	}
	if req.PageURL != "" {
		b.WriteString("Page URL: " + req.PageURL + "\n")
	}
	if cut {
		fmt.Fprintf(&b, "Page text (cut to about %d tokens):\n", budget)
	} else {
		b.WriteString("Page text:\n")
	}
	b.WriteString("<<<\n" + text + "\n>>>\n")
	return b.String()
}

// retryPrompt asks again with the problems of the last answer.
func retryPrompt(problems []string) string {
	var b strings.Builder
	b.WriteString("Your answer does not validate against the JSON Schema:\n")
	for _, p := range problems {
		b.WriteString("- " + p + "\n")
	}
	b.WriteString("Answer again with the whole JSON object, corrected. Use null where the page does not state a value.")
	return b.String()
}

// CutToTokens cuts text to about budget tokens (bytes/4), at the last line
// end in the final quarter of the allowance when there is one, else at a
// character boundary; cut says whether anything was dropped.
func CutToTokens(text string, budget int) (out string, cut bool) {
	limit := budget * 4
	if budget <= 0 || len(text) <= limit {
		return text, false
	}
	n := limit
	for n > 0 && !utf8.RuneStart(text[n]) {
		n--
	}
	head := text[:n]
	if i := strings.LastIndexByte(head, '\n'); i >= limit*3/4 {
		head = head[:i]
	}
	return head, true
}

// readAnswer parses an answer, coerces each asked path's value, and
// validates the result against the restricted schema. It returns the
// values that coerced (by path) and the problems, each naming a path.
func readAnswer(full, answer *structured.Schema, missing []string, text string) (map[string]any, []string) {
	obj, err := parseJSONObject(text)
	if err != nil {
		return nil, []string{"the answer is not a JSON object: " + err.Error()}
	}
	values := map[string]any{}
	var problems []string
	built := map[string]any{}
	refused := map[string]bool{}
	for _, p := range missing {
		v, ok := getPath(obj, p)
		if !ok || v == nil {
			continue
		}
		cv, err := full.CoerceValue(p, v)
		if err != nil {
			problems = append(problems, err.Error())
			refused[p+": required property is missing"] = true
			continue
		}
		values[p] = cv
		setPath(built, p, cv)
	}
	// A refused value is not in built; its own problem says enough.
	for _, m := range answer.Validate(built) {
		if !refused[m] {
			problems = append(problems, m)
		}
	}
	sort.Strings(problems)
	return values, dedupe(problems)
}

// parseJSONObject reads the JSON object in a model's answer, tolerating
// code fences and prose around it.
func parseJSONObject(text string) (map[string]any, error) {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "```") {
		t = strings.TrimPrefix(t, "```")
		t = strings.TrimPrefix(strings.TrimPrefix(t, "json"), "JSON")
		t = strings.TrimSuffix(strings.TrimSpace(t), "```")
	}
	var obj map[string]any
	err := json.Unmarshal([]byte(t), &obj)
	if err == nil && obj != nil {
		return obj, nil
	}
	if i, j := strings.IndexByte(t, '{'), strings.LastIndexByte(t, '}'); i >= 0 && j > i {
		if err2 := json.Unmarshal([]byte(t[i:j+1]), &obj); err2 == nil && obj != nil {
			return obj, nil
		}
	}
	if err == nil {
		return nil, errors.New("it is null")
	}
	return nil, err
}

// getPath reads a dot path of nested objects.
func getPath(obj map[string]any, path string) (any, bool) {
	var cur any = obj
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// setPath sets a dot path, making the objects on the way.
func setPath(obj map[string]any, path string, v any) {
	parts := strings.Split(path, ".")
	for _, k := range parts[:len(parts)-1] {
		next, ok := obj[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[k] = next
		}
		obj = next
	}
	obj[parts[len(parts)-1]] = v
}

// cloneMap copies nested objects so setPath never writes into the
// caller's map.
func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			v = cloneMap(sub)
		}
		out[k] = v
	}
	return out
}

// dedupe drops repeats from a sorted list.
func dedupe(s []string) []string {
	var out []string
	for i, x := range s {
		if i == 0 || x != s[i-1] {
			out = append(out, x)
		}
	}
	return out
}
