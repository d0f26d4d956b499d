package mcp

import (
	"context"
	"encoding/json"

	"github.com/browsertask/browsertask/engine"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

func (s *Server) listTaskTemplatesTool() toolDef {
	return toolDef{
		name:  "list_task_templates",
		title: "List task templates",
		description: "Lists the browser task templates this server can run, with their templateId, version(s), " +
			"title, description, inputSchema (what run_task_template's inputs must look like), resultSchema, " +
			"required trust level, whether a run resumes after a restart, a size hint and example inputs. " +
			"Call it first, before run_task_template. Pass includeSchemas=false for a short list without schemas.",
		annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
		input: object(map[string]any{
			"includeSchemas": map[string]any{"type": "boolean", "default": true,
				"description": "Include each template's inputSchema and resultSchema (default true)."},
		}),
		output: outputOf(object(map[string]any{
			"templates": map[string]any{"type": "array", "items": templateSchema()},
		}, "templates")),
		handle: s.listTaskTemplates,
	}
}

// templateSchema describes one entry of list_task_templates.
func templateSchema() map[string]any {
	return object(map[string]any{
		"templateId":         str("Pass it to run_task_template, optionally as \"id@version\"."),
		"version":            integer("Latest version."),
		"versions":           map[string]any{"type": "array", "items": map[string]any{"type": "integer"}},
		"title":              str("Short name."),
		"description":        str("What it does and when to use it."),
		"inputSchema":        map[string]any{"type": "object", "description": "JSON Schema of inputs."},
		"resultSchema":       map[string]any{"type": "object", "description": "JSON Schema of the run's result."},
		"trustLevel":         str("Trust level the template needs: local or any."),
		"resumable":          map[string]any{"type": "boolean"},
		"usesOutputSchema":   map[string]any{"type": "boolean", "description": "Present and true when run_task_template needs options.outputSchema for it."},
		"estimatedStepsHint": str("How the number of steps grows with the inputs."),
		"examples":           map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
	}, "templateId", "version", "title", "description", "trustLevel")
}

// listTaskTemplates answers the registered templates.
func (s *Server) listTaskTemplates(_ context.Context, _ *sdk.CallToolRequest, raw json.RawMessage) *sdk.CallToolResult {
	a := struct {
		IncludeSchemas *bool `json:"includeSchemas"`
	}{}
	if err := decodeArgs(raw, &a); err != nil {
		return errorResult(err)
	}
	withSchemas := a.IncludeSchemas == nil || *a.IncludeSchemas
	infos := s.eng.Templates()
	out := make([]engine.TemplateInfo, 0, len(infos))
	for _, t := range infos {
		if !withSchemas {
			t.InputSchema, t.ResultSchema = nil, nil
		}
		if t.Versions == nil {
			t.Versions = []int{t.Version}
		}
		if t.Examples == nil {
			t.Examples = []json.RawMessage{}
		}
		out = append(out, t)
	}
	return jsonResult(map[string]any{"templates": out}, false)
}
