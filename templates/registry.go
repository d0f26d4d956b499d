package templates

import (
	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
	"github.com/browsertask/browsertask/internal/extract/modelfill"
)

// All returns every template of this binary, wired to the browser manager
// b (which gives each run its session and tabs) and to model, the
// server's configured model endpoint (nil when there is none: then
// extract_structured asks the submitting client's model through MCP
// sampling, or nothing), in the order list_task_templates shows them.
// Registration takes every dependency here, so no caller swaps a template
// in by its name.
func All(b *browser.Manager, model modelfill.Sampler) []engine.Template {
	return []engine.Template{
		NewBatchExtractPages(b),
		NewScreenshotPages(b),
		NewSavePDF(b),
		NewCrawlSite(b),
		NewLogin(b),
		NewRunSteps(b),
		NewExtractStructured(b, model),
		NewMapSite(b),
		NewProfileSignIn(b),
		NewAgentTask(b, model),
	}
}
