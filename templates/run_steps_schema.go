package templates

// stepSchema builds one alternative of the steps' oneOf: an object whose
// action is const action, with the given extra properties and required
// names.
func stepSchema(action, props string, required ...string) string {
	req := `"action"`
	for _, r := range required {
		req += `, "` + r + `"`
	}
	if props != "" {
		props = ", " + props
	}
	return `{"type": "object", "additionalProperties": false, "required": [` + req + `],
      "properties": {"action": {"const": "` + action + `"}` + props + `}}`
}

const (
	selProp     = `"selector": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "CSS selector; the first match is used."}`
	waitProp    = `"timeoutMs": {"type": "integer", "minimum": 100, "maximum": 120000, "description": "How long to wait for the element (default 5000)."}`
	nameProp    = `"name": {"type": "string", "pattern": "^[A-Za-z0-9_.-]{1,100}$", "description": "Key of the value in result.values (or the artifact's name)."}`
	navWaitProp = `"waitFor": ` + waitForSchema
)

// runStepsInputSchema returns run_steps' input JSON Schema: steps
// discriminated by action.
func runStepsInputSchema() string {
	return `{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "type": "object", "additionalProperties": false, "required": ["steps"],
  "properties": {
    "startUrl": {"type": "string", "minLength": 1, "maxLength": 8192, "description": "Page opened before step 0 (errors there report stepIndex -1)."},
    "steps": {"type": "array", "minItems": 1, "maxItems": 200, "items": {"oneOf": [
      ` + stepSchema("navigate", `"url": {"type": "string", "minLength": 1, "maxLength": 8192}, `+navWaitProp+`, "timeoutMs": {"type": "integer", "minimum": 1000, "maximum": 120000, "description": "Load deadline (default navigationTimeoutMs)."}`, "url") + `,
      ` + stepSchema("click", selProp+", "+waitProp, "selector") + `,
      ` + stepSchema("type", selProp+`, "text": {"type": "string", "maxLength": 100000, "description": "Replaces the field's value, typed as keyboard input."}, "secret": {"type": "boolean", "default": false, "description": "Mask text as *** everywhere (stored, logged, shown)."}, `+waitProp, "selector", "text") + `,
      ` + stepSchema("press", `"key": {"type": "string", "minLength": 1, "maxLength": 20, "description": "Enter, Tab, Escape, Backspace, Delete, Space, ArrowUp/Down/Left/Right, Home, End, PageUp, PageDown, or one character."}`, "key") + `,
      ` + stepSchema("select", selProp+`, "value": {"type": "string", "maxLength": 1000, "description": "Option value (or visible label)."}, `+waitProp, "selector", "value") + `,
      {"type": "object", "additionalProperties": false, "required": ["action"],
       "properties": {"action": {"const": "wait_for"}, ` + selProp + `, "text": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "Text that must appear on the page."}, ` + waitProp + `},
       "oneOf": [{"required": ["selector"]}, {"required": ["text"]}]},
      ` + stepSchema("scroll", `"to": {"type": "string", "minLength": 1, "maxLength": 1000, "description": "\"bottom\", \"top\" or a CSS selector to scroll into view."}`, "to") + `,
      ` + stepSchema("extract", nameProp+", "+selProp+`, "attr": {"type": "string", "minLength": 1, "maxLength": 200, "description": "Attribute to read, or text (default) or html."}, "all": {"type": "boolean", "default": false, "description": "Every match as a list (no wait)."}, `+waitProp, "name", "selector") + `,
      ` + stepSchema("screenshot", nameProp+`, "fullPage": {"type": "boolean", "default": false}`, "name") + `,
      ` + stepSchema("pdf", nameProp, "name") + `,
      ` + stepSchema("evaluate", `"script": {"type": "string", "minLength": 1, "maxLength": 100000, "description": "A JavaScript expression (wrap statements in an IIFE); a returned promise is awaited; its JSON value goes to result.values[name]."}, `+nameProp, "script") + `
    ]}},
    "viewport": ` + viewportSchema + `,
    "navigationTimeoutMs": {"type": "integer", "minimum": 1000, "maximum": 120000, "default": 30000, "description": "Load deadline of startUrl and navigate steps; past it the step fails with NAVIGATION_TIMEOUT."}
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
