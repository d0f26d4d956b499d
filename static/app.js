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

// A reply whose target left the page while the request was out (a
// refresh of the region replaced it) goes into the region as it is now
// when it answers a person's action (an answer, a cancel), and is dropped
// when it is a refresh (older than what replaced it). htmx picks a
// request's target when it sends the request and swaps into it whatever
// happened since: into a detached target the swap shows nothing — the
// person's Done went unseen, the page kept the question — and htmx's
// hx-preserve handling, which moves the kept elements (the live view, a
// half-typed answer) out of the page before the swap and back into the
// swapped-in content after it, finds no content on the page and deletes
// them. htmx fires htmx:beforeSwap on that detached target, where no
// document listener hears it, so a listener is put on the target itself
// when the request leaves.
document.addEventListener("htmx:beforeRequest", function (ev) {
  var target = ev.detail.target, xhr = ev.detail.xhr;
  if (!target || !xhr) return;
  var onSwap = function (e) {
    var d = e.detail;
    if (d.xhr !== xhr) return;
    target.removeEventListener("htmx:beforeSwap", onSwap);
    if (target.isConnected) return;
    var cfg = d.requestConfig || {};
    var now = cfg.verb !== "get" && target.id ? document.getElementById(target.id) : null;
    if (now) d.target = now;
    else d.shouldSwap = false;
  };
  // It removes itself at its reply's swap; one of a request that gets no
  // swap (an error) stays on its element, idle, as long as the element.
  target.addEventListener("htmx:beforeSwap", onSwap);
});
