package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/browsertask/browsertask/engine"
)

// newRunPage serves the form, pre-filled with the chosen template's first
// example; with HX-Request only the form (the template picker swaps it).
func (d *Dashboard) newRunPage(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("template")
	if id == "" {
		id = r.URL.Query().Get("templateId") // the picker's own field name
	}
	v := d.newRunView(id, "")
	d.render(w, r, http.StatusOK, newRunPage(v), newRunForm(v))
}

// newRunView builds the form for template id (the first one when unknown),
// with inputs as given or else the template's first example.
func (d *Dashboard) newRunView(id, inputs string) NewRunView {
	v := NewRunView{Page: d.page("New run", "new"), Inputs: inputs}
	tpls := d.eng.Templates()
	var sel *engine.TemplateInfo
	for i := range tpls {
		if tpls[i].TemplateID == id {
			sel = &tpls[i]
		}
	}
	if sel == nil && len(tpls) > 0 {
		sel = &tpls[0]
	}
	for _, t := range tpls {
		v.Templates = append(v.Templates, TemplateOption{ID: t.TemplateID, Title: t.Title, Selected: sel != nil && t.TemplateID == sel.TemplateID})
	}
	if sel != nil {
		v.Selected = sel.TemplateID
		v.Schema = pretty(sel.InputSchema)
		if v.Inputs == "" {
			v.Inputs = "{}"
			if len(sel.Examples) > 0 {
				v.Inputs = pretty(sel.Examples[0])
			}
		}
	}
	return v
}

// startRun validates the form through the engine (so the messages are the
// ones run_task_template gives) and starts the run in async mode; it
// redirects to the run, or shows the form again with the error (422).
func (d *Dashboard) startRun(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		d.fail(w, r, engine.Errorf(engine.InvalidParameter, "form: %v", err))
		return
	}
	id, inputs := r.PostForm.Get("templateId"), r.PostForm.Get("inputs")
	raw, err := formInputs(inputs)
	if err == nil {
		var res *engine.SubmitResult
		if res, err = d.eng.Submit(r.Context(), engine.SubmitRequest{TemplateID: id, Inputs: raw, Mode: engine.ModeAsync}); err == nil {
			d.log.Info("run started from the dashboard", "runId", res.Run.RunID, "templateId", id)
			http.Redirect(w, r, "/runs/"+url.PathEscape(res.Run.RunID), http.StatusSeeOther)
			return
		}
	}
	v := d.newRunView(id, inputs)
	v.Error = errorView(engine.AsError(err))
	d.render(w, r, http.StatusUnprocessableEntity, newRunPage(v), newRunForm(v))
}

// formInputs parses the inputs text area: empty means {}, anything but a
// JSON object is INVALID_PARAMETER worded as the MCP tool words it.
func formInputs(s string) (json.RawMessage, error) {
	b := bytes.TrimSpace([]byte(s))
	if len(b) == 0 {
		return json.RawMessage("{}"), nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, engine.Errorf(engine.InvalidParameter, "inputs is not valid JSON: %v", err).WithDetails(map[string]any{"field": "inputs"})
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, engine.Errorf(engine.InvalidParameter, "inputs must be an object, got %s", string(b)).WithDetails(map[string]any{"field": "inputs"})
	}
	return b, nil
}
