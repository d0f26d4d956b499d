// Copy buttons: <button data-copy="#id"> copies the text of the element.
document.addEventListener("click", function (ev) {
  var b = ev.target.closest("button[data-copy]");
  if (!b) return;
  var el = document.querySelector(b.getAttribute("data-copy"));
  if (!el || !navigator.clipboard) return;
  navigator.clipboard.writeText(el.textContent).then(function () {
    var was = b.textContent;
    b.textContent = "Copied";
    setTimeout(function () { b.textContent = was; }, 1200);
  });
});

// A region that refreshes itself (hx-trigger "every …") is not redrawn
// while a pointer is pressed inside it: the browser drops a click whose
// element moved between press and release — even a move that keeps the
// element (hx-preserve) — so a poll's answer landing in the middle of a
// person's click on Done, Send or Cancel swallowed the click. The answer
// is skipped; the next poll brings the region up to date.
(function () {
  var pressed = null;
  document.addEventListener("pointerdown", function (ev) { pressed = ev.target; }, true);
  document.addEventListener("pointerup", function () { pressed = null; }, true);
  document.addEventListener("pointercancel", function () { pressed = null; }, true);
  document.addEventListener("htmx:beforeSwap", function (ev) {
    var d = ev.detail, cfg = d.requestConfig || {};
    if (!pressed || !d.target || cfg.verb !== "get" || cfg.elt !== d.target) return;
    if (d.target.contains(pressed)) d.shouldSwap = false;
  });
})();

// The reply to a person's action (an answer, a cancel) goes into the
// region as it is now. htmx picks a request's target when it sends the
// request; a region that refreshed itself while the request was out is a
// new element, and htmx drops a reply whose target left the page — the
// person's Done went unseen, the page kept showing the question, and with
// the focus still on the button it stopped refreshing. The target is
// changed on htmx:beforeOnLoad, which htmx fires on the requesting element
// (still on the page: a kept answer form) and reads the target from
// after; htmx:beforeSwap goes to the old target, off the page, where no
// listener hears it. A refresh (GET) whose target was replaced is dropped
// as before: it is older than what replaced it.
document.addEventListener("htmx:beforeOnLoad", function (ev) {
  var d = ev.detail, cfg = d.requestConfig || {};
  if (!d.target || d.target.isConnected || cfg.verb === "get" || !d.target.id) return;
  var now = document.getElementById(d.target.id);
  if (now) d.target = now;
});
