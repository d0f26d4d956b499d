package cli

import (
	"github.com/browsertask/browsertask/internal/conformance"
	"github.com/browsertask/browsertask/mcp"
)

// devPlugin is the MCP server's plugin under --dev-templates: the official
// conformance suite's fixture tools, prompt and resource
// (internal/conformance), whose task tools run on the dev_tool_job
// template the same flag registers. Without the flag it is nil, so a
// user's server carries the product's tools only.
func devPlugin(cfg *config) mcp.Plugin {
	if !cfg.devTemplates {
		return nil
	}
	return conformance.New()
}
