package templates

// loginDetectJS finds the login form's fields for the login template: given
// selectors win; otherwise the password field is the first visible input
// with autocomplete current-password, else type password; the username
// field (searched in the password's form) by autocomplete username/email,
// then input type email, then its label, then its name/id, then its
// placeholder; the submit control in that form by type, preferring a
// "log in / sign in" text. Found fields get a data-browsertask-login
// attribute and come back as selectors; missing ones as null. A selector
// that does not parse throws (INVALID_PARAMETER).
const loginDetectJS = `((cfg) => {
  const visible = el => {
    if (!el || el.disabled) return false;
    const r = el.getBoundingClientRect(), st = getComputedStyle(el);
    return r.width > 0 && r.height > 0 && st.visibility !== 'hidden' && st.display !== 'none';
  };
  const mark = (el, role) => { el.setAttribute('data-browsertask-login', role); return '[data-browsertask-login="' + role + '"]'; };
  const labelOf = el => {
    const parts = [];
    if (el.labels) for (const l of el.labels) parts.push(l.innerText || l.textContent || '');
    parts.push(el.getAttribute('aria-label') || '');
    const by = el.getAttribute('aria-labelledby');
    if (by) for (const id of by.split(/\s+/)) { const n = document.getElementById(id); if (n) parts.push(n.textContent || ''); }
    return parts.join(' ');
  };
  const userRE = /user|e-?mail|login|account|identifier|benutzer|usuario|utilisateur/i;
  const submitRE = /log\s*-?\s*in|sign\s*-?\s*in|submit|continue|next|enter|anmelden|connexion/i;
  let pw = null, user = null, sub = null;
  if (cfg.password) pw = document.querySelector(cfg.password);
  else {
    const inputs = Array.from(document.querySelectorAll('input')).filter(visible);
    pw = inputs.find(e => /current-password/.test(e.getAttribute('autocomplete') || '')) ||
         inputs.find(e => e.type === 'password') || null;
  }
  const scope = pw && pw.form ? pw.form : document;
  if (cfg.username) user = document.querySelector(cfg.username);
  else {
    const c = Array.from(scope.querySelectorAll('input')).filter(e => e !== pw && visible(e) && ['text', 'email', 'tel'].includes(e.type));
    user = c.find(e => /\b(username|email)\b/.test(e.getAttribute('autocomplete') || '')) ||
           c.find(e => e.type === 'email') ||
           c.find(e => userRE.test(labelOf(e))) ||
           c.find(e => userRE.test((e.name || '') + ' ' + (e.id || ''))) ||
           c.find(e => userRE.test(e.placeholder || '')) || null;
  }
  if (cfg.submit) sub = document.querySelector(cfg.submit);
  else if (pw) {
    const s = pw.form || document;
    const c = Array.from(s.querySelectorAll('button, input[type=submit], input[type=image]'))
      .filter(e => visible(e) && !(e.tagName === 'BUTTON' && ['button', 'reset'].includes((e.getAttribute('type') || '').toLowerCase())));
    sub = c.find(e => submitRE.test((e.innerText || e.value || '') + ' ' + (e.getAttribute('aria-label') || ''))) || c[0] || null;
  }
  return {
    username: user ? mark(user, 'username') : null,
    password: pw ? mark(pw, 'password') : null,
    submit: sub ? mark(sub, 'submit') : null,
    inForm: !!(pw && pw.form),
  };
})(%s)`

// loginOKJS defines loginOK(cfg): the success check holds: urlContains in
// the URL and/or selector present; with neither, the page has finished
// loading and shows neither a visible password field nor a one-time-code
// field (otpFindJS). It needs otpFindJS defined before it.
const loginOKJS = `
const loginOK = cfg => {
  if (document.readyState !== 'complete') return false;
  if (cfg.urlContains && !location.href.includes(cfg.urlContains)) return false;
  if (cfg.selector && !document.querySelector(cfg.selector)) return false;
  if (!cfg.urlContains && !cfg.selector) {
    for (const e of document.querySelectorAll('input[type=password]')) {
      const r = e.getBoundingClientRect();
      if (r.width > 0 && r.height > 0) return false;
    }
    if (otpFind()) return false;
  }
  return true;
};
`

// loginSuccessJS resolves once the success check (loginOKJS) holds.
const loginSuccessJS = `((cfg) => new Promise(resolve => {` + otpFindJS + loginOKJS + `
  const f = () => loginOK(cfg) ? resolve(true) : setTimeout(f, 100);
  f();
}))(%s)`

// loginPageStateJS describes the page after a failed login, for the error
// message: its URL, title and the first visible error-looking text.
const loginPageStateJS = `(() => {
  const el = document.querySelector('[role=alert], .error, .alert, #error, .errors, .flash, [aria-live]');
  const t = el ? (el.innerText || el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 200) : '';
  return {url: location.href, title: document.title || '', message: t};
})()`
