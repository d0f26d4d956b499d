package mcp

import (
	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools' schemas are written by hand (not reflected from Go types) so
// they say exactly what the contract says: ranges, enums, nullability, and
// output schemas that admit every shape a tool returns, including the error
// object. Objects never set additionalProperties:false: fields are only ever
// added (the v1 contract), and unknown argument fields are ignored — but
// run_task_template names them in ignoredArguments, so a typo is not silent.

// object is a JSON Schema object with the given properties and required names.
func object(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// str is a string schema with a description.
func str(desc string) map[string]any {
	return map[string]any{"type": "string", "description": desc}
}

// integer is an integer schema with a description.
func integer(desc string) map[string]any {
	return map[string]any{"type": "integer", "description": desc}
}

// offsetInt is an integer argument >= 0 that defaults to 0 (an offset, an
// afterSeq).
func offsetInt(desc string) map[string]any {
	return map[string]any{"type": "integer", "minimum": 0, "default": 0, "description": desc}
}

// destructiveIdempotent annotates a tool that ends something (a run, a
// session) and may be repeated harmlessly.
func destructiveIdempotent() *sdk.ToolAnnotations {
	destructive := true
	return &sdk.ToolAnnotations{DestructiveHint: &destructive, IdempotentHint: true}
}

// nullable is s or null, spelled as anyOf of single-type branches rather
// than a type array: clients that map tool schemas onto a single-type
// dialect (the OpenAPI subset some model providers use) reject or weaken
// "type": [..., "null"]. desc describes the whole value.
func nullable(s map[string]any, desc string) map[string]any {
	return map[string]any{"anyOf": []any{s, map[string]any{"type": "null"}}, "description": desc}
}

// nullableInt is an integer-or-null schema (Unix ms that may be unset).
func nullableInt(desc string) map[string]any {
	return nullable(map[string]any{"type": "integer"}, desc)
}

// freeObject is a JSON object with any members: what a template's result
// or an event's details are, without a shape this schema can name.
func freeObject() map[string]any {
	return map[string]any{"type": "object", "additionalProperties": true}
}

// nullableObject is a free-form object or null.
func nullableObject(desc string) map[string]any {
	return nullable(freeObject(), desc)
}

// objectOrBoolean is a JSON Schema given as an argument (options.
// outputSchema): an object, or true / false, spelled as anyOf of
// single-type branches.
func objectOrBoolean(desc string) map[string]any {
	return map[string]any{"anyOf": []any{map[string]any{"type": "object"}, map[string]any{"type": "boolean"}}, "description": desc}
}

// withProps returns a copy of base with extra properties and required names.
func withProps(base map[string]any, extra map[string]any, required ...string) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	props := map[string]any{}
	for k, v := range base["properties"].(map[string]any) {
		props[k] = v
	}
	for k, v := range extra {
		props[k] = v
	}
	out["properties"] = props
	if base["required"] != nil || len(required) > 0 {
		req, _ := base["required"].([]string)
		out["required"] = append(append([]string(nil), req...), required...)
	}
	return out
}

// outputOf is a tool's outputSchema: a top-level object (some clients
// require type "object" at the root) that is any of the success shapes or
// the error object, since clients may validate structuredContent even on
// isError results.
func outputOf(success ...map[string]any) map[string]any {
	alts := make([]any, 0, len(success)+1)
	for _, s := range success {
		alts = append(alts, s)
	}
	alts = append(alts, errorObjectSchema())
	return map[string]any{"type": "object", "anyOf": alts}
}

// statusEnum lists the six run statuses.
func statusEnum() []string {
	out := make([]string, 0, len(engine.AllStatuses))
	for _, s := range engine.AllStatuses {
		out = append(out, string(s))
	}
	return out
}

// errorObjectSchema is the contract's error object.
func errorObjectSchema() map[string]any {
	codes := make([]string, 0, len(engine.AllErrorCodes))
	for _, c := range engine.AllErrorCodes {
		codes = append(codes, string(c))
	}
	return object(map[string]any{
		"errorCode": map[string]any{"type": "string", "enum": codes, "description": "One of the 16 contract error codes."},
		"message":   str("Human sentence naming the cause."),
		"recovery":  str("What to do next."),
		"details":   map[string]any{"type": "object", "description": "Optional machine-readable details (for example the offending field)."},
	}, "errorCode", "message", "recovery")
}

// runSchema is the contract's Run object.
func runSchema() map[string]any {
	return object(map[string]any{
		"runId":           str(`"run_" + UUID.`),
		"templateId":      str("Template that runs."),
		"templateVersion": integer("Template version that runs."),
		"sessionId":       str("Browser session the run uses."),
		"ownsSession":     map[string]any{"type": "boolean", "description": "True when the run created the session and closes it at the end."},
		"status":          map[string]any{"type": "string", "enum": statusEnum()},
		"mode":            str("The mode actually used: sync, async or auto."),
		"progress": object(map[string]any{
			"doneSteps":   integer("Steps finished."),
			"totalSteps":  integer("Steps planned (0 when unknown)."),
			"failedSteps": integer("Steps that failed."),
			"message":     str("Latest progress message."),
		}, "doneSteps", "totalSteps"),
		"metrics": object(map[string]any{
			"elapsedMs":        integer("Running time so far, or total once terminal."),
			"queuedMs":         integer("Time spent queued."),
			"modelCalls":       integer("Questions a model answered for the run, all attempts (absent when none: only extract_structured asks one)."),
			"promptTokens":     integer("Prompt tokens the model reported, all attempts (a client's sampling answers report none)."),
			"completionTokens": integer("Completion tokens the model reported, all attempts."),
		}, "elapsedMs"),
		"result":       nullableObject("The template's result (an object, as its resultSchema describes); null unless succeeded or partial_success."),
		"error":        map[string]any{"anyOf": []any{map[string]any{"type": "null"}, errorObjectSchema()}, "description": "Null unless failed or canceled."},
		"artifactIds":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"createdAt":    integer("Unix ms."),
		"updatedAt":    integer("Unix ms."),
		"startedAt":    nullableInt("Unix ms, or null before the run starts."),
		"finishedAt":   nullableInt("Unix ms, or null before the run ends."),
		"expiresAt":    nullableInt("Unix ms after which the run may be forgotten."),
		"inputRequest": inputRequestSchema(),
	}, "runId", "templateId", "sessionId", "status", "progress", "metrics", "result", "error", "artifactIds", "createdAt", "updatedAt")
}

// runRowSchema is one row of list_task_runs: the Run object without its
// result (which may be large) and with the result's size instead, so a
// caller pages through runs cheaply and fetches the results it wants.
func runRowSchema() map[string]any {
	return withProps(withoutProp(runSchema(), "result"), map[string]any{
		"resultBytes": map[string]any{"type": "integer", "minimum": 0,
			"description": "size in bytes of the run's result JSON; fetch it with get_task_run"},
	}, "resultBytes")
}

// withoutProp returns a copy of base without the property name (neither
// among its properties nor among its required names).
func withoutProp(base map[string]any, name string) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	props := map[string]any{}
	for k, v := range base["properties"].(map[string]any) {
		if k != name {
			props[k] = v
		}
	}
	out["properties"] = props
	if req, ok := base["required"].([]string); ok {
		kept := make([]string, 0, len(req))
		for _, r := range req {
			if r != name {
				kept = append(kept, r)
			}
		}
		out["required"] = kept
	}
	return out
}

// runAnswerSchema is a terminal Run as run_task_template answers it in sync
// mode, with the actual mode and the dedupe flag.
func runAnswerSchema() map[string]any {
	return withProps(runSchema(), map[string]any{
		"mode":             map[string]any{"type": "string", "enum": []string{"sync"}},
		"deduplicated":     map[string]any{"type": "boolean"},
		"inputsMatch":      inputsMatchSchema(),
		"ignoredArguments": ignoredArgumentsSchema(),
	}, "mode", "deduplicated")
}

// asyncHandleSchema is run_task_template's async reply.
func asyncHandleSchema() map[string]any {
	return object(map[string]any{
		"runId":            str("Poll it with get_task_run."),
		"sessionId":        str("Browser session the run uses."),
		"status":           map[string]any{"type": "string", "enum": statusEnum()},
		"mode":             map[string]any{"type": "string", "enum": []string{"async"}},
		"deduplicated":     map[string]any{"type": "boolean", "description": "True when idempotencyKey matched an existing run."},
		"inputsMatch":      inputsMatchSchema(),
		"ignoredArguments": ignoredArgumentsSchema(),
		"inputRequest":     inputRequestSchema(),
	}, "runId", "sessionId", "status", "mode", "deduplicated")
}

// inputRequestSchema is the optional field of a running run that waits for
// a person (v1 adds it; null or absent otherwise).
func inputRequestSchema() map[string]any {
	return map[string]any{"anyOf": []any{map[string]any{"type": "null"}, object(map[string]any{
		"requestId":   str("Answer with answer_task_run {runId, requestId, value | confirm}."),
		"kind":        map[string]any{"type": "string", "enum": []string{engine.QuestionText, engine.QuestionSecret, engine.QuestionConfirm, engine.QuestionTakeover, engine.QuestionMCP}},
		"message":     str("What the run asks, for the person (never answer it yourself)."),
		"requestedAt": integer("Unix ms."),
		"expiresAt":   integer("Unix ms; without an answer by then the run fails RUN_TIMEOUT (reason \"no answer\")."),
		"url":         str("kind takeover: the live view where the person acts in the run's browser and presses Done; give it to your user."),
	}, "requestId", "kind", "message", "requestedAt", "expiresAt")},
		"description": "Set while the running run waits for a person (a one-time code, a confirmation, a takeover in the live view); null otherwise."}
}

// ignoredArgumentsSchema is the optional v1.1 list of unknown arguments.
func ignoredArgumentsSchema() map[string]any {
	return map[string]any{"type": "array", "items": map[string]any{"type": "string"},
		"description": "Present when the request carried arguments this server does not know (e.g. \"options.timeout\" for options.timeoutMs): " +
			"they were ignored, as the contract says for forward compatibility; check them for typos."}
}

// inputsMatchSchema is the optional v1.1 field of a deduplicated answer.
func inputsMatchSchema() map[string]any {
	return map[string]any{"type": "boolean", "description": "Only when deduplicated: whether this request's inputs equal the existing run's. " +
		"false means the idempotencyKey was reused with different inputs and the existing run (with its own inputs) was returned, not a new one."}
}
