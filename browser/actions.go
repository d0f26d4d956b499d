package browser

import (
	"context"
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/go-rod/rod/lib/proto"

	"github.com/browsertask/browsertask/engine"
)

// DefaultElementWait is how long an action waits for its element to
// appear when the caller gives no deadline: a run_steps step without
// timeoutMs waits 5000 ms, as its input schema says.
const DefaultElementWait = 5 * time.Second

// jsQuote returns v as a JavaScript string literal.
func jsQuote(v string) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// WaitSelector waits until sel matches an element in the tab, up to wait (0 =
// DefaultElementWait). Errors: ELEMENT_NOT_FOUND (details.selector),
// INVALID_PARAMETER (bad selector), PAGE_CRASHED, EXECUTION_ERROR, or the
// cause of ctx.
func (tb *Tab) WaitSelector(ctx context.Context, sel string, wait time.Duration) error {
	return tb.waitJS(ctx, waitSelectorJS(sel, ""), wait, func() *engine.Error {
		return engine.Errorf(engine.ElementNotFound, "no element matched %q within %d ms", sel, waitMs(wait)).
			WithDetails(map[string]any{"selector": sel})
	})
}

// WaitText waits until the page's visible text contains text. Errors as
// WaitSelector (ELEMENT_NOT_FOUND with details.text).
func (tb *Tab) WaitText(ctx context.Context, text string, wait time.Duration) error {
	js := `new Promise(resolve => { const f = () => { if (document.body && document.body.innerText.includes(` + jsQuote(text) +
		`)) return resolve(true); setTimeout(f, 50) }; f() })`
	return tb.waitJS(ctx, js, wait, func() *engine.Error {
		return engine.Errorf(engine.ElementNotFound, "the text %q did not appear within %d ms", text, waitMs(wait)).
			WithDetails(map[string]any{"text": text})
	})
}

func waitMs(d time.Duration) int64 {
	if d <= 0 {
		d = DefaultElementWait
	}
	return d.Milliseconds()
}

// waitJS evaluates a waiting expression under a deadline; when the deadline
// (not ctx) ends it, notFound gives the error.
func (tb *Tab) waitJS(ctx context.Context, js string, wait time.Duration, notFound func() *engine.Error) error {
	if wait <= 0 {
		wait = DefaultElementWait
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	_, err := tb.evalRetry(wctx, js)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if tb.Crashed() {
		return tb.mapErr(ctx, err, "wait for an element")
	}
	if wctx.Err() != nil {
		return notFound()
	}
	return err
}

// elementCenter scrolls sel's first match into view and returns its
// centre in CSS pixels. Errors: ELEMENT_NOT_FOUND when it has no box.
func (tb *Tab) elementCenter(ctx context.Context, sel string) (float64, float64, error) {
	raw, err := tb.Eval(ctx, `(() => { const el = document.querySelector(`+jsQuote(sel)+`); if (!el) return null;
el.scrollIntoView({block: 'center', inline: 'center'}); const r = el.getBoundingClientRect();
return r.width > 0 && r.height > 0 ? [r.left + r.width / 2, r.top + r.height / 2] : null })()`)
	if err != nil {
		return 0, 0, err
	}
	var xy []float64
	if json.Unmarshal(raw, &xy) != nil || len(xy) != 2 {
		return 0, 0, engine.Errorf(engine.ElementNotFound, "the element %q is not visible (no layout box)", sel).
			WithDetails(map[string]any{"selector": sel})
	}
	return xy[0], xy[1], nil
}

// Click waits for sel and clicks the centre of its first match with a real
// mouse press (what covers the element receives the click, as for a
// user). Errors: as WaitSelector.
func (tb *Tab) Click(ctx context.Context, sel string, wait time.Duration) error {
	if err := tb.WaitSelector(ctx, sel, wait); err != nil {
		return err
	}
	x, y, err := tb.elementCenter(ctx, sel)
	if err != nil {
		return err
	}
	gctx, cancel := tb.guard(ctx)
	defer cancel()
	for _, t := range []proto.InputDispatchMouseEventType{proto.InputDispatchMouseEventTypeMouseMoved,
		proto.InputDispatchMouseEventTypeMousePressed, proto.InputDispatchMouseEventTypeMouseReleased} {
		ev := proto.InputDispatchMouseEvent{Type: t, X: x, Y: y}
		if t != proto.InputDispatchMouseEventTypeMouseMoved {
			ev.Button, ev.ClickCount = proto.InputMouseButtonLeft, 1
		}
		if err := ev.Call(tb.client(gctx)); err != nil {
			return tb.mapErr(ctx, err, "click "+sel)
		}
	}
	return nil
}

// Type waits for sel, focuses it, clears its value and inserts text as
// keyboard input (input events fire as for a user). Errors: as
// WaitSelector; STEP_EXECUTION_FAILED when the element cannot take text.
func (tb *Tab) Type(ctx context.Context, sel, text string, wait time.Duration) error {
	return tb.typeText(ctx, sel, text, wait, "")
}

// typeText is Type; prep is script run on the element (el) first.
func (tb *Tab) typeText(ctx context.Context, sel, text string, wait time.Duration, prep string) error {
	if err := tb.WaitSelector(ctx, sel, wait); err != nil {
		return err
	}
	raw, err := tb.Eval(ctx, `(() => { const el = document.querySelector(`+jsQuote(sel)+`); if (!el) return 'missing';
`+prep+`
el.scrollIntoView({block: 'center'}); el.focus();
if ('value' in el) { el.value = ''; el.dispatchEvent(new Event('input', {bubbles: true})) }
else if (!el.isContentEditable) return 'not editable';
return document.activeElement === el ? 'ok' : 'not focusable' })()`)
	if err != nil {
		return err
	}
	var state string
	_ = json.Unmarshal(raw, &state)
	if state != "ok" {
		return engine.Errorf(engine.StepExecutionFailed, "cannot type into %q: %s", sel, state).
			WithDetails(map[string]any{"selector": sel})
	}
	gctx, cancel := tb.guard(ctx)
	defer cancel()
	if err := (proto.InputInsertText{Text: text}).Call(tb.client(gctx)); err != nil {
		return tb.mapErr(ctx, err, "type into "+sel)
	}
	_, err = tb.Eval(ctx, `(() => { const el = document.activeElement; if (el) el.dispatchEvent(new Event('change', {bubbles: true})); return true })()`)
	return err
}

// keyDef is one named key for Press.
type keyDef struct {
	code    string
	keyCode int
	text    string
}

var namedKeys = map[string]keyDef{
	"Enter": {"Enter", 13, "\r"}, "Tab": {"Tab", 9, ""}, "Escape": {"Escape", 27, ""},
	"Backspace": {"Backspace", 8, ""}, "Delete": {"Delete", 46, ""}, "Space": {"Space", 32, " "},
	"ArrowUp": {"ArrowUp", 38, ""}, "ArrowDown": {"ArrowDown", 40, ""},
	"ArrowLeft": {"ArrowLeft", 37, ""}, "ArrowRight": {"ArrowRight", 39, ""},
	"Home": {"Home", 36, ""}, "End": {"End", 35, ""}, "PageUp": {"PageUp", 33, ""}, "PageDown": {"PageDown", 34, ""},
}

// KeyNames lists the named keys Press accepts (besides single characters),
// sorted: the error that lists them must read the same for the same input
// (map order would reshuffle it on every call).
func KeyNames() []string {
	out := make([]string, 0, len(namedKeys))
	for k := range namedKeys {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Press presses and releases key in the focused element: a name of
// KeyNames or a single character. Errors: INVALID_PARAMETER (unknown
// key), PAGE_CRASHED, EXECUTION_ERROR.
func (tb *Tab) Press(ctx context.Context, key string) error {
	d, ok := namedKeys[key]
	if !ok {
		if r := []rune(key); len(r) == 1 {
			d = keyDef{text: key}
			if c := strings.ToUpper(key); len(c) == 1 && c[0] >= 'A' && c[0] <= 'Z' {
				d.code, d.keyCode = "Key"+c, int(c[0])
			}
		} else {
			return engine.Errorf(engine.InvalidParameter, "unknown key %q: use a single character or one of %s", key, strings.Join(KeyNames(), ", "))
		}
	}
	name := key
	if key == "Space" {
		name = " "
	}
	gctx, cancel := tb.guard(ctx)
	defer cancel()
	down := proto.InputDispatchKeyEvent{Type: proto.InputDispatchKeyEventTypeKeyDown, Key: name, Code: d.code,
		WindowsVirtualKeyCode: d.keyCode, NativeVirtualKeyCode: d.keyCode, Text: d.text, UnmodifiedText: d.text}
	if d.text == "" {
		down.Type = proto.InputDispatchKeyEventTypeRawKeyDown
	}
	up := proto.InputDispatchKeyEvent{Type: proto.InputDispatchKeyEventTypeKeyUp, Key: name, Code: d.code,
		WindowsVirtualKeyCode: d.keyCode, NativeVirtualKeyCode: d.keyCode}
	for _, ev := range []proto.InputDispatchKeyEvent{down, up} {
		if err := ev.Call(tb.client(gctx)); err != nil {
			return tb.mapErr(ctx, err, "press "+key)
		}
	}
	return nil
}

// Select waits for a <select> matching sel and chooses the option whose
// value (or else visible label) is value, firing input and change.
// Errors: as WaitSelector; STEP_EXECUTION_FAILED when no option matches
// or the element is not a select.
func (tb *Tab) Select(ctx context.Context, sel, value string, wait time.Duration) error {
	if err := tb.WaitSelector(ctx, sel, wait); err != nil {
		return err
	}
	raw, err := tb.Eval(ctx, `(() => { const el = document.querySelector(`+jsQuote(sel)+`), v = `+jsQuote(value)+`;
if (!el || el.tagName !== 'SELECT') return 'not a <select>';
const opt = Array.from(el.options).find(o => o.value === v) || Array.from(el.options).find(o => o.label.trim() === v);
if (!opt) return 'no option with value or label ' + JSON.stringify(v);
el.value = opt.value; el.dispatchEvent(new Event('input', {bubbles: true})); el.dispatchEvent(new Event('change', {bubbles: true}));
return 'ok' })()`)
	if err != nil {
		return err
	}
	var state string
	_ = json.Unmarshal(raw, &state)
	if state != "ok" {
		return engine.Errorf(engine.StepExecutionFailed, "cannot select %q in %q: %s", value, sel, state).
			WithDetails(map[string]any{"selector": sel})
	}
	return nil
}

// WaitJS evaluates expr, a promise that resolves when a condition holds,
// starting over when a navigation replaces the page, until it resolves or
// ctx ends. Errors: ctx's error, INVALID_PARAMETER / STEP_EXECUTION_FAILED
// when the script throws, PAGE_CRASHED, EXECUTION_ERROR.
func (tb *Tab) WaitJS(ctx context.Context, expr string) error {
	_, err := tb.WaitValue(ctx, expr)
	return err
}

// WaitValue is WaitJS returning the value the promise resolved to.
func (tb *Tab) WaitValue(ctx context.Context, expr string) (json.RawMessage, error) {
	raw, err := tb.evalRetry(ctx, expr)
	if err != nil && tb.Crashed() {
		return nil, tb.mapErr(ctx, err, "wait for a condition")
	}
	return raw, err
}
