package templates

import (
	"context"
	"testing"

	"github.com/browsertask/browsertask/internal/extract/modelfill"
)

// fixedSampler is a model that is never asked: the test only checks where
// it is wired.
type fixedSampler struct{ name string }

func (fixedSampler) Sample(context.Context, modelfill.SampleRequest) (modelfill.SampleResponse, error) {
	return modelfill.SampleResponse{}, nil
}

// TestAllWiresTheModel: All registers the ten templates in
// list_task_templates order, and extract_structured and agent_task, the ones that ask a
// model, get the model given (nil: none).
func TestAllWiresTheModel(t *testing.T) {
	want := []string{"batch_extract_pages", "screenshot_pages", "save_pdf", "crawl_site", "login", "run_steps", "extract_structured", "map_site", "profile_sign_in", "agent_task"}
	m := &fixedSampler{name: "configured"}
	for _, model := range []modelfill.Sampler{nil, m} {
		tpls := All(nil, model)
		if len(tpls) != len(want) {
			t.Fatalf("All returned %d templates, want %d", len(tpls), len(want))
		}
		for i, tpl := range tpls {
			if id := tpl.Info().TemplateID; id != want[i] {
				t.Fatalf("template %d is %s, want %s", i, id, want[i])
			}
		}
		es, ok := tpls[6].(*ExtractStructured)
		if !ok {
			t.Fatalf("extract_structured is a %T", tpls[6])
		}
		if es.model != model {
			t.Fatalf("extract_structured's model is %v, want %v", es.model, model)
		}
		if at, ok := tpls[9].(*AgentTask); !ok || at.model != model {
			t.Fatalf("agent_task is %T with model %v, want model %v", tpls[9], tpls[9], model)
		}
	}
}
