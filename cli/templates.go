package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/browsertask/browsertask/engine"
)

// cmdTemplates lists the templates, or describes one.
func cmdTemplates(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	sub := &cmdFlags{usage: `Usage: browsertask templates [NAME] [flags]

Lists the task templates. With NAME, describes that template: its inputs
(name, type, default, description; * marks the required ones) and an
example command line.

Examples:
  browsertask templates
  browsertask templates batch_extract_pages`, maxArgs: 1}
	a, err := openForCLI(ctx, "templates", args, getenv, stderr, sub)
	if err != nil {
		return err
	}
	defer a.close()
	all := a.engine.Templates()
	if len(sub.args) == 1 {
		name := strings.SplitN(sub.args[0], "@", 2)[0]
		var ids []string
		for _, t := range all {
			if t.TemplateID == name {
				return describeTemplate(stdout, t)
			}
			ids = append(ids, t.TemplateID)
		}
		return fmt.Errorf("no template %q: the templates are %s (browsertask templates lists them)", name, strings.Join(ids, ", "))
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TEMPLATE\tVERSION\tTRUST\tRESUMABLE\tTITLE")
	for _, t := range all {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%v\t%s\n", t.TemplateID, t.Version, t.TrustLevel, t.Resumable, t.Title)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout, "\nbrowsertask templates NAME describes a template's inputs.")
	return nil
}

// schemaProp is the part of an input's JSON Schema that describes it to a
// person.
type schemaProp struct {
	Type        any             `json:"type"`
	Description string          `json:"description"`
	Default     json.RawMessage `json:"default"`
	Enum        []any           `json:"enum"`
	Format      string          `json:"format"`
	Secret      bool            `json:"x-secret"`
	WriteOnly   bool            `json:"writeOnly"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
	Items       *schemaProp     `json:"items"`
	OneOf       []schemaProp    `json:"oneOf"`
	AnyOf       []schemaProp    `json:"anyOf"`
}

// secret reports whether the schema marks the input secret (x-secret,
// writeOnly or format password, as the engine masks them).
func (p schemaProp) secret() bool { return p.Secret || p.WriteOnly || p.Format == "password" }

// inputSchema is a template's input schema, its properties in the order
// the schema lists them.
type inputSchema struct {
	order    []string
	props    map[string]schemaProp
	required map[string]bool
}

// parseInputSchema reads a template's input schema.
func parseInputSchema(raw json.RawMessage) (*inputSchema, error) {
	var doc struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	s := &inputSchema{props: map[string]schemaProp{}, required: map[string]bool{}}
	if len(raw) == 0 {
		return s, nil
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("read the input schema: %w", err)
	}
	for _, r := range doc.Required {
		s.required[r] = true
	}
	if len(doc.Properties) == 0 {
		return s, nil
	}
	if err := json.Unmarshal(doc.Properties, &s.props); err != nil {
		return nil, fmt.Errorf("read the input schema's properties: %w", err)
	}
	keys, err := objectKeys(doc.Properties)
	if err != nil {
		return nil, err
	}
	s.order = keys
	return s, nil
}

// objectKeys returns a JSON object's keys in document order.
func objectKeys(raw json.RawMessage) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("want a JSON object, got %.40s", raw)
	}
	var keys []string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		keys = append(keys, t.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, err
		}
	}
	return keys, nil
}

// typeText says what values an input takes: "integer 1..20", "array of
// string", "string or object", "string, one of load, networkidle",
// ", secret" for secrets.
func typeText(p schemaProp) string {
	t := typeName(p.Type)
	switch {
	case t == "array" && p.Items != nil && typeText(*p.Items) != "":
		t = "array of " + typeText(*p.Items)
	case t == "" && len(p.OneOf)+len(p.AnyOf) > 0:
		var alts []string
		for _, alt := range append(append([]schemaProp{}, p.OneOf...), p.AnyOf...) {
			if a := typeText(alt); a != "" && !contains(alts, a) {
				alts = append(alts, a)
			}
		}
		t = strings.Join(alts, " or ")
	}
	switch {
	case p.Minimum != nil && p.Maximum != nil:
		t += fmt.Sprintf(" %v..%v", *p.Minimum, *p.Maximum)
	case p.Minimum != nil:
		t += fmt.Sprintf(" >= %v", *p.Minimum)
	case p.Maximum != nil:
		t += fmt.Sprintf(" <= %v", *p.Maximum)
	}
	if len(p.Enum) > 0 {
		vals := make([]string, len(p.Enum))
		for i, v := range p.Enum {
			vals[i] = fmt.Sprint(v)
		}
		t = joinNonEmpty(t, "(one of "+strings.Join(vals, ", ")+")")
	}
	if p.secret() {
		t += ", secret"
	}
	return strings.TrimSpace(t)
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// describeTemplate prints a template: title, description, its inputs and
// an example command line.
func describeTemplate(w io.Writer, t engine.TemplateInfo) error {
	s, err := parseInputSchema(t.InputSchema)
	if err != nil {
		return fmt.Errorf("template %s: %w", t.TemplateID, err)
	}
	fmt.Fprintf(w, "%s (version %d) — %s\n", t.TemplateID, t.Version, t.Title)
	if t.Description != "" {
		fmt.Fprintln(w)
		wrapText(w, "", t.Description, 78)
	}
	resumable := "no"
	if t.Resumable {
		resumable = "yes (an interrupted run goes on from its checkpoints)"
	}
	fmt.Fprintf(w, "\nTrust level: %s. Resumable: %s.\n", t.TrustLevel, resumable)
	fmt.Fprintln(w, "\nInputs (* = required):")
	if len(s.order) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, name := range s.order {
		p := s.props[name]
		head := "  " + name
		if s.required[name] {
			head += "*"
		}
		head = joinNonEmpty(head, " "+typeText(p))
		if len(p.Default) > 0 {
			head += ", default " + compactJSON(p.Default)
		}
		fmt.Fprintln(w, head)
		if p.Description != "" {
			wrapText(w, "      ", p.Description, 78)
		}
	}
	fmt.Fprintln(w, "\nExample:")
	fmt.Fprintln(w, "  "+exampleCommand(t, s))
	var secrets []string
	for _, name := range s.order {
		if s.props[name].secret() {
			secrets = append(secrets, name)
		}
	}
	fmt.Fprintln(w)
	if len(secrets) > 0 {
		wrapText(w, "", "Secret inputs ("+strings.Join(secrets, ", ")+") given on the command line may stay in the shell history: put them in the --inputs file instead.", 78)
	}
	wrapText(w, "", `Arrays take comma-separated values (or JSON: ["a,b","c"]); objects take JSON. Or give every input as one JSON object: --inputs FILE, or --inputs - to read it from stdin.`, 78)
	return nil
}

// wrapText prints text wrapped at width, every line indented.
func wrapText(w io.Writer, indent, text string, width int) {
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && len([]rune(line))+1+len([]rune(word)) > width {
			fmt.Fprintln(w, line)
			line = ""
		}
		if line == "" {
			line = indent + word
			continue
		}
		line += " " + word
	}
	if line != "" {
		fmt.Fprintln(w, line)
	}
}

// exampleCommand is a command line that runs t with its first example's
// inputs (or placeholders for the required inputs when it has none): each
// input as --input key=value, as buildInputs reads them back.
func exampleCommand(t engine.TemplateInfo, s *inputSchema) string {
	var example json.RawMessage
	if len(t.Examples) > 0 {
		example = t.Examples[0]
	}
	if t.RequiresProfile {
		// A person signs in by hand: from a terminal that is `profiles
		// new`, which creates the profile, submits the run and prints the
		// dashboard page to sign in at.
		var in struct {
			URL string `json:"url"`
		}
		_ = json.Unmarshal(example, &in)
		return strings.Join([]string{"browsertask", "profiles", "new", "work", "--open", shellQuote(cmp.Or(in.URL, "URL"))}, " ")
	}
	parts := []string{"browsertask", "run", t.TemplateID}
	var values map[string]json.RawMessage
	keys, err := objectKeys(example)
	if err != nil || json.Unmarshal(example, &values) != nil {
		keys, values = nil, map[string]json.RawMessage{}
		for _, name := range s.order {
			if s.required[name] {
				keys = append(keys, name)
				values[name] = json.RawMessage(fmt.Sprintf("%q", strings.ToUpper(name)))
			}
		}
	}
	for _, k := range keys {
		parts = append(parts, "--input", shellQuote(k+"="+inputText(values[k])))
	}
	if t.UsesOutputSchema {
		parts = append(parts, "--output-schema", shellQuote(exampleOutputSchema))
	}
	if t.RequiresSession {
		parts = append(parts, "--session", "new", "--save-session", "session.json")
	}
	return strings.Join(parts, " ")
}

// exampleOutputSchema is the output schema the example command line of a
// template that needs one (extract_structured) passes: a product, as in
// the template's description.
const exampleOutputSchema = `{"type":"object","required":["name","price"],"properties":{"name":{"type":"string"},"price":{"type":"number"},"currency":{"type":"string"}}}`

// inputText writes one input value as --input takes it: a string as it
// is, an array of strings and numbers comma-separated when no element
// holds a comma, anything else as JSON.
func inputText(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	switch x := v.(type) {
	case string:
		return x
	case []any:
		parts := make([]string, 0, len(x))
		for _, e := range x {
			switch e := e.(type) {
			case string:
				if strings.Contains(e, ",") || strings.TrimSpace(e) != e || e == "" {
					return compactJSON(raw)
				}
				parts = append(parts, e)
			case float64, bool:
				parts = append(parts, fmt.Sprint(e))
			default:
				return compactJSON(raw)
			}
		}
		if len(parts) == 0 {
			return "[]"
		}
		return strings.Join(parts, ",")
	}
	return compactJSON(raw)
}

// compactJSON is raw without insignificant spaces.
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return string(raw)
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell when it holds anything but plain
// characters.
func shellQuote(s string) string {
	plain := s != ""
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("-_./:=,@%+", c)) {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
