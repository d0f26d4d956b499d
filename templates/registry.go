package templates

import (
	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

// All returns every template of this binary, wired to the browser manager
// b (which gives each run its session and tabs), in the order
// list_task_templates shows them.
func All(b *browser.Manager) []engine.Template {
	return []engine.Template{
		NewBatchExtractPages(b),
		NewScreenshotPages(b),
		NewSavePDF(b),
		NewCrawlSite(b),
		NewLogin(b),
		NewRunSteps(b),
		NewExtractStructured(b, nil),
	}
}
