package templates

// stepSchema builds the rule of one action: if a step's action is action,
// then it is an object with the given extra properties (and no others) and
// required names. The rules are applied with allOf rather than listed in a
// oneOf, so a malformed step is reported by its own action's rule alone
// ("inputs.steps[2]: missing property 'message'") instead of by every
// alternative it does not match.
func stepSchema(action, props string, required ...string) string {
	return stepRule(action, props, "", required...)
}

// stepRule is stepSchema with extra keywords (e.g. a oneOf over required
// names) added to the then-branch.
func stepRule(action, props, extra string, required ...string) string {
	req := `"action"`
	for _, r := range required {
		req += `, "` + r + `"`
	}
	if props != "" {
		props = ", " + props
	}
	if extra != "" {
		extra = ", " + extra
	}
	return `{"if": {"required": ["action"], "properties": {"action": {"const": "` + action + `"}}}, "then": {"additionalProperties": false, "required": [` + req + `],
      "properties": {"action": {"const": "` + action + `"}` + props + `}` + extra + `}}`
}

// stepActions are run_steps' actions, in the order the schema lists them.
const stepActions = `"navigate", "click", "type", "press", "select", "wait_for", "scroll", "extract", "screenshot", "pdf", "ask", "confirm", "takeover", "evaluate"`

const (
	selProp     = `"selector": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "CSS selector; the first match is used."}`
	waitProp    = `"timeoutMs": {"type": "integer", "minimum": 100, "maximum": 120000, "description": "How long to wait for the element (default 5000)."}`
	nameProp    = `"name": {"type": "string", "pattern": "^[A-Za-z0-9_.-]{1,100}$", "description": "Key of the value in result.values (or the artifact's name)."}`
	navWaitProp = `"waitFor": ` + waitForSchema
	msgProp     = `"message": {"type": "string", "minLength": 1, "maxLength": 2000, "description": "The question shown to the person (ask: what to enter; confirm: what a yes allows; takeover: what to do in the browser before pressing Done)."}`
)

// runStepsInputSchema returns run_steps' input JSON Schema: steps
// discriminated by action.
func runStepsInputSchema() string {
	return `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object", "additionalProperties": false, "required": ["steps"],
  "properties": {
    "startUrl": {"type": "string", "minLength": 1, "maxLength": 8192, "description": "Page opened before step 0 (errors there report stepIndex -1)."},
    "steps": {"type": "array", "minItems": 1, "maxItems": 200, "items": {"type": "object", "required": ["action"],
      "properties": {"action": {"enum": [` + stepActions + `], "description": "What the step does; the other fields depend on it (see the template's description)."}},
      "allOf": [
      ` + stepSchema("navigate", `"url": {"type": "string", "minLength": 1, "maxLength": 8192}, `+navWaitProp+`, "timeoutMs": {"type": "integer", "minimum": 1000, "maximum": 120000, "description": "Load deadline (default navigationTimeoutMs)."}`, "url") + `,
      ` + stepSchema("click", selProp+", "+waitProp, "selector") + `,
      ` + stepSchema("type", selProp+`, "text": {"type": "string", "maxLength": 100000, "description": "Replaces the field's value, typed as keyboard input."}, "secret": {"type": "boolean", "default": false, "description": "Mask text as *** everywhere (stored, logged, shown)."}, `+waitProp, "selector", "text") + `,
      ` + stepSchema("press", `"key": {"type": "string", "minLength": 1, "maxLength": 20, "description": "Enter, Tab, Escape, Backspace, Delete, Space, ArrowUp/Down/Left/Right, Home, End, PageUp, PageDown, or one character."}`, "key") + `,
      ` + stepSchema("select", selProp+`, "value": {"type": "string", "maxLength": 1000, "description": "Option value (or visible label)."}, `+waitProp, "selector", "value") + `,
      ` + stepRule("wait_for", selProp+`, "text": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "Text that must appear on the page."}, `+waitProp,
		`"oneOf": [{"required": ["selector"]}, {"required": ["text"]}]`) + `,
      ` + stepSchema("scroll", `"to": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "\"bottom\", \"top\" or a CSS selector to scroll into view."}`, "to") + `,
      ` + stepSchema("extract", nameProp+", "+selProp+`, "attr": {"type": "string", "minLength": 1, "maxLength": 200, "description": "Attribute to read, or text (default) or html."}, "all": {"type": "boolean", "default": false, "description": "Every match as a list (no wait)."}, `+waitProp, "name", "selector") + `,
      ` + stepSchema("screenshot", nameProp+`, "fullPage": {"type": "boolean", "default": false}`, "name") + `,
      ` + stepSchema("pdf", nameProp, "name") + `,
      ` + stepSchema("ask", msgProp+", "+selProp+`, "secret": {"type": "boolean", "default": false, "description": "Ask for a secret (a PIN, a one-time code): hidden input where the person answers, masked as *** everywhere."}, `+waitProp, "message", "selector") + `,
      ` + stepSchema("confirm", msgProp, "message") + `,
      ` + stepSchema("takeover", msgProp, "message") + `,
      ` + stepSchema("evaluate", `"script": {"type": "string", "minLength": 1, "maxLength": 100000, "description": "A JavaScript expression (wrap statements in an IIFE); a returned promise is awaited; its JSON value goes to result.values[name]."}, `+nameProp, "script") + `
    ]}},
    "viewport": ` + viewportSchema() + `,
    "navigationTimeoutMs": ` + pageTimeoutSchema("Load deadline of startUrl and navigate steps; past it the step fails with NAVIGATION_TIMEOUT.") + `
  }
}`
}

const runStepsResultSchema = `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object", "required": ["values", "artifacts", "finalUrl"],
  "properties": {
    "values": {"type": "object", "description": "extract and evaluate results by name."},
    "artifacts": {"type": "array", "items": {"type": "object", "required": ["name", "artifactId", "mimeType", "stepIndex"],
      "properties": {"name": {"type": "string"}, "artifactId": {"type": "string"}, "mimeType": {"type": "string"}, "stepIndex": {"type": "integer"}}}},
    "finalUrl": {"type": "string"}, "title": {"type": "string"}, "steps": {"type": "integer"}
  }
}`
