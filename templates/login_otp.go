package templates

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/browsertask/browsertask/browser"
	"github.com/browsertask/browsertask/engine"
)

// A login may need a second step: after the password the site asks for a
// one-time code (an authenticator app, an SMS, an e-mail). login watches
// for it after submitting; when a code field shows before the success
// check passes, it takes inputs.otp or asks the person (a secret question,
// requestId "otp", engine.AskText), types the code, submits it, and then
// applies the success check.

// otpRequestID is the requestId of the one-time-code question.
const otpRequestID = "otp"

// otpFindJS defines otpFind(): the visible one-time-code field of the page,
// or null. A field qualifies by autocomplete "one-time-code"; else by a
// name, id, label, placeholder or aria-label saying otp / one-time /
// passcode / verification / 2FA / two-factor / MFA / authenticator /
// security code / code / token; else, for an input that appeared after the
// credentials were submitted (it lacks data-browsertask-seen), by the look
// of a code field (inputmode numeric, a digits pattern, maxlength 4..10).
// Only empty text, tel and number inputs qualify (password inputs only
// with autocomplete one-time-code), once found a field stays found while
// it shows; the login's own username and password fields, search boxes
// and fields named like other codes (promo, coupon, ZIP, postal, country,
// captcha, API token...) never do. The field found is marked
// data-browsertask-login="otp" and its submit control "otp-submit": the
// form's submit button preferring verify / continue / confirm texts, or,
// for a field outside any form, such a button near it (never "resend" or
// "back" buttons); null when there is none (Enter submits).
const otpFindJS = `
const otpVisible = el => {
  if (!el || el.disabled || el.readOnly) return false;
  const r = el.getBoundingClientRect(), st = getComputedStyle(el);
  return r.width > 0 && r.height > 0 && st.visibility !== 'hidden' && st.display !== 'none';
};
const otpLabel = el => {
  const parts = [el.name || '', el.id || '', el.placeholder || '', el.getAttribute('aria-label') || ''];
  if (el.labels) for (const l of el.labels) parts.push(l.innerText || l.textContent || '');
  const by = el.getAttribute('aria-labelledby');
  if (by) for (const id of by.split(/\s+/)) { const n = document.getElementById(id); if (n) parts.push(n.textContent || ''); }
  return parts.join(' ');
};
const otpButtonText = e => (e.innerText || e.value || '') + ' ' + (e.getAttribute('aria-label') || '');
const otpFind = () => {
  const kw = /one[-_\s]?time|otp|passcode|verification|verify|\b2fa\b|two[-_\s]?(factor|step)|\bmfa\b|authenticator|security[-_\s]?code|\b(auth|sms|email)?[-_\s]?code\b|\btoken\b/i;
  const other = /zip|postal|post[-_\s]?code|promo|coupon|voucher|discount|gift|referr|invit|country|area[-_\s]?code|captcha|search|api[-_\s]?(key|token)|access[-_\s]?token|tracking|order|invoice|sort[-_\s]?code|swift|iban|currency|language/i;
  const c = Array.from(document.querySelectorAll('input')).filter(e => {
    if (!otpVisible(e)) return false;
    const role = e.getAttribute('data-browsertask-login');
    if (role === 'username' || role === 'password') return false;
    if (e.value !== '' && role !== 'otp') return false;
    const type = (e.getAttribute('type') || 'text').toLowerCase();
    const ac = (e.getAttribute('autocomplete') || '').toLowerCase();
    if (ac.includes('one-time-code')) return ['text', 'tel', 'number', 'password'].includes(type);
    return ['text', 'tel', 'number'].includes(type) && !other.test(otpLabel(e));
  });
  const looksLikeCode = e => (e.getAttribute('inputmode') || '') === 'numeric' || /\\d|0-9/.test(e.getAttribute('pattern') || '') ||
    (e.maxLength >= 4 && e.maxLength <= 10);
  const f = c.find(e => e.getAttribute('data-browsertask-login') === 'otp') ||
    c.find(e => (e.getAttribute('autocomplete') || '').toLowerCase().includes('one-time-code')) ||
    c.find(e => kw.test(otpLabel(e))) ||
    c.find(e => !e.hasAttribute('data-browsertask-seen') && looksLikeCode(e)) || null;
  if (!f) return null;
  for (const e of document.querySelectorAll('[data-browsertask-login="otp"], [data-browsertask-login="otp-submit"]')) if (e !== f) e.removeAttribute('data-browsertask-login');
  f.setAttribute('data-browsertask-login', 'otp');
  const good = /verify|submit|continue|confirm|next|sign|log|done|ok\b|send/i, bad = /resend|new code|another|back|cancel|different|help|problem/i;
  let submit = null;
  if (f.form) {
    const b = Array.from(f.form.querySelectorAll('button, input[type=submit], input[type=image]'))
      .filter(e => otpVisible(e) && !bad.test(otpButtonText(e)) && !(e.tagName === 'BUTTON' && ['button', 'reset'].includes((e.getAttribute('type') || '').toLowerCase())));
    submit = b.find(e => good.test(otpButtonText(e))) || b[0] || null;
  } else {
    // No form: a button near the field (its own, or an ancestor's up to 5 levels).
    let scope = f.parentElement;
    for (let i = 0; scope && i < 5 && !submit; i++, scope = scope.parentElement) {
      const b = Array.from(scope.querySelectorAll('button, input[type=submit], input[type=button], [role=button]'))
        .filter(e => otpVisible(e) && !bad.test(otpButtonText(e)) && (e.getAttribute('type') || '').toLowerCase() !== 'reset');
      submit = b.find(e => good.test(otpButtonText(e))) || (i < 2 && b.length === 1 ? b[0] : null);
    }
  }
  if (submit) submit.setAttribute('data-browsertask-login', 'otp-submit');
  return {field: '[data-browsertask-login="otp"]', submit: submit ? '[data-browsertask-login="otp-submit"]' : null};
};
`

// loginMarkSeenJS marks the inputs shown before the credentials are
// submitted, so an input that appears afterwards (added, or shown from
// hidden) is known as new.
const loginMarkSeenJS = `(() => { document.querySelectorAll('input').forEach(e => {
  const r = e.getBoundingClientRect(), st = getComputedStyle(e);
  if (r.width > 0 && r.height > 0 && st.visibility !== 'hidden' && st.display !== 'none') e.setAttribute('data-browsertask-seen', '');
}); return true })()`

// loginAfterSubmitJS resolves, once the page has loaded, to {success:
// true} when the success check (cfg as loginSuccessJS; the default check
// fails while a one-time-code field shows) has held for cfg.settleMs on
// the page, else to {otp} when a one-time-code field shows. The settle
// time covers pages that hide the password form and show the code field
// a moment later (a spinner, an interstitial page that redirects).
const loginAfterSubmitJS = `((cfg) => new Promise(resolve => {` + otpFindJS + loginOKJS + `
  let okSince = 0;
  const f = () => {
    if (document.readyState === 'complete' && loginOK(cfg)) {
      const now = performance.now();
      if (!okSince) okSince = now;
      if (now - okSince >= cfg.settleMs) return resolve({success: true});
    } else {
      okSince = 0;
      const otp = document.readyState === 'complete' && otpFind();
      if (otp) return resolve({otp});
    }
    setTimeout(f, 100);
  };
  f();
}))(%s)`

// otpStep is what loginAfterSubmitJS found.
type otpStep struct {
	OTP *struct {
		Field  string  `json:"field"`
		Submit *string `json:"submit"`
	} `json:"otp"`
	Success bool `json:"success"`
}

// secondStep waits, after the credentials were submitted, for either the
// success check or a one-time-code field; for a code field it enters a
// code (inputs.otp, or the person's answer) and submits it, with up to
// otpAttempts tries when the site rejects one (enterCodes). It reports
// whether a code was entered, and how long verify may still wait for the
// success check: successTimeoutMs, or a last short look once a wait here
// used it up. A page that shows neither within successTimeoutMs is left
// to verify, which explains the failure.
func (t *Login) secondStep(ctx context.Context, env engine.Env, tb *browser.Tab, in *loginInputs, p *loginProgress) (bool, time.Duration, error) {
	cfg, _ := json.Marshal(map[string]any{"urlContains": in.Success.URLContains, "selector": in.Success.Selector, "settleMs": loginSettle.Milliseconds()})
	wctx, cancel := context.WithTimeout(ctx, timeoutDur(in.SuccessTimeoutMs))
	defer cancel()
	raw, err := tb.WaitValue(wctx, fmt.Sprintf(loginAfterSubmitJS, cfg))
	var step otpStep
	if err != nil || json.Unmarshal(raw, &step) != nil || step.OTP == nil {
		if ctx.Err() != nil {
			return false, 0, context.Cause(ctx)
		}
		if wctx.Err() != nil {
			return false, loginLastLook, nil
		}
		return false, timeoutDur(in.SuccessTimeoutMs), nil
	}
	return t.enterCodes(ctx, env, tb, in, p, step.OTP.Field, step.OTP.Submit)
}

// loginSettle is how long the success check must hold after the
// credentials were submitted before login takes it as passed rather than
// a moment before a one-time-code field shows.
const loginSettle = 750 * time.Millisecond

// loginLastLook is how long verify looks at the page once secondStep used
// up successTimeoutMs waiting: the check it waited for is the same.
const loginLastLook = 300 * time.Millisecond

// otpMessageSelector finds the error messages a code page shows.
const otpMessageSelector = `[role=alert], .error, .alert, #error, .errors`

// otpMarkMessagesJS notes the text of the page's error messages before the
// code is submitted (data-browsertask-msg), and watches them from then on
// (window.__btMsgTouched), so otpAfterCodeJS can tell a message the
// submission brought: a new one, one with a new text, or the same text
// written again (a second wrong code on a page that stays says "Invalid
// code" once more).
const otpMarkMessagesJS = `(() => { const sel = '` + otpMessageSelector + `';
  for (const e of document.querySelectorAll(sel)) e.setAttribute('data-browsertask-msg', (e.innerText || e.textContent || '').trim());
  if (window.__btMsgObs) window.__btMsgObs.disconnect();
  const touched = new Set();
  window.__btMsgTouched = touched;
  window.__btMsgObs = new MutationObserver(ms => { for (const m of ms) {
    const n = m.target.nodeType === 1 ? m.target : m.target.parentElement;
    const el = n && n.closest(sel);
    if (el) touched.add(el);
  } });
  window.__btMsgObs.observe(document.documentElement, {subtree: true, childList: true, characterData: true});
  return true })()`

// otpAfterCodeJS resolves, once the page has loaded after the code was
// submitted, when the code field went away (navigation or removal):
// {rejected: ""}; or when a visible error message appeared (new, or with a
// new text) while a one-time-code field still shows: {rejected: the
// message, url, title}.
const otpAfterCodeJS = `new Promise(resolve => {` + otpFindJS + `
  const fresh = () => {
    for (const e of document.querySelectorAll('` + otpMessageSelector + `')) {
      const t = (e.innerText || e.textContent || '').replace(/\s+/g, ' ').trim();
      const r = e.getBoundingClientRect();
      if (t && r.width > 0 && r.height > 0 && (t !== e.getAttribute('data-browsertask-msg') || (window.__btMsgTouched && window.__btMsgTouched.has(e)))) return t.slice(0, 200);
    }
    return '';
  };
  const f = () => {
    if (document.readyState === 'complete') {
      const msg = fresh();
      if (msg && otpFind()) return resolve({rejected: msg, url: location.href, title: document.title || ''});
      if (!document.querySelector('[data-browsertask-login="otp"]')) return resolve({rejected: ''});
    }
    setTimeout(f, 100);
  };
  f();
})`
