package browser

import (
	"context"
	"time"
)

// obscureJS hides the text of the element el before a secret is typed
// into it: a text field holding a PIN or a one-time code would otherwise
// show it in every later frame of the live view (and the last frame kept
// on the finished run's page) and in every screenshot. It runs in the
// same evaluation that focuses and clears the field, before the value is
// inserted, so no frame ever shows the value. -webkit-text-security draws
// each character as a disc, as a password field does, whatever the
// element (an input, a textarea, a contenteditable); the element is
// marked data-browsertask-secret, and an observer puts the style back if
// the page rewrites the element's style attribute. The field stays
// obscured while the page lives, even once its value changed: what it
// shows afterwards may still be derived from the secret.
const obscureJS = `el.setAttribute('data-browsertask-secret', '');
const hide = () => { if (el.style.getPropertyValue('-webkit-text-security') !== 'disc') el.style.setProperty('-webkit-text-security', 'disc', 'important') };
hide();
if (!el.__browsertaskSecret) { el.__browsertaskSecret = new MutationObserver(hide); el.__browsertaskSecret.observe(el, {attributes: true, attributeFilter: ['style']}) }`

// TypeSecret is Type for a secret (a password, a one-time code, a value a
// run_steps step marks secret): the element is obscured before the text
// is inserted (obscureJS), so neither the live view nor a screenshot
// shows it. Errors: as Type.
func (tb *Tab) TypeSecret(ctx context.Context, sel, text string, wait time.Duration) error {
	return tb.typeText(ctx, sel, text, wait, obscureJS)
}
