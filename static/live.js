// Live view (run page): sizes the frame stream to the viewer, replaces each
// frame in place (no flicker), and, while a takeover is open, sends the
// person's clicks, scrolls and keys on a tab's frame to the run's browser,
// in order, one request at a time.
(function () {
  "use strict";

  // Frame size in device pixels, set before htmx opens the stream.
  document.querySelectorAll("[data-live-stream]").forEach(function (el) {
    var dpr = window.devicePixelRatio || 1;
    var w = Math.round(Math.min(Math.max(el.clientWidth || 960, 320), 1920) * dpr);
    var h = Math.round(w * 0.75);
    el.setAttribute("sse-connect", el.getAttribute("data-live-stream") + "?w=" + w + "&h=" + h);
  });

  // A frame event replaces the image's source instead of the element.
  document.addEventListener("htmx:sseBeforeMessage", function (ev) {
    var el = ev.target;
    if (!el.classList || !el.classList.contains("frame")) return;
    var img = el.querySelector("img.shot");
    if (!img) return; // the first frame: htmx swaps it in
    var t = document.createElement("template");
    t.innerHTML = ev.detail.data;
    var next = t.content.querySelector("img");
    if (!next) return;
    ev.preventDefault();
    img.src = next.src;
    img.setAttribute("data-seq", next.getAttribute("data-seq") || "");
  });

  // A "tabs" redraw keeps each tab's address bar (hx-preserve); the bar
  // then shows the tab's address, unless the person is typing in it.
  document.addEventListener("input", function (ev) {
    if (ev.target.classList && ev.target.classList.contains("live-goto-url")) ev.target.setAttribute("data-edited", "true");
  });
  document.addEventListener("submit", function (ev) {
    var input = ev.target.querySelector && ev.target.querySelector(".live-goto-url");
    if (input) input.removeAttribute("data-edited");
  });
  // A "tabs" redraw replaces each tab's frame: the frame the person was
  // typing into gets the focus back in the same task, so their next keys
  // still go to the run's browser (a page whose title changes as it is
  // typed into redraws the tabs at every key).
  var focusedTab = null;
  document.addEventListener("htmx:sseBeforeMessage", function (ev) {
    if (ev.target.id !== "live-tabs") return;
    var a = document.activeElement, tab = a && a.classList && a.classList.contains("frame") ? a.closest(".live-tab") : null;
    focusedTab = tab ? tab.getAttribute("data-tab-id") : null;
  });
  document.addEventListener("htmx:sseMessage", function (ev) {
    if (ev.target.id !== "live-tabs") return;
    ev.target.querySelectorAll(".live-tab").forEach(function (tab) {
      var input = tab.querySelector(".live-goto-url"), url = tab.querySelector(".live-url");
      if (!input || !url) return;
      if (input === document.activeElement && input.getAttribute("data-edited") === "true") return;
      input.removeAttribute("data-edited");
      input.defaultValue = url.textContent;
      input.value = url.textContent;
    });
    if (focusedTab !== null) {
      var frame = ev.target.querySelector('.live-tab[data-tab-id="' + CSS.escape(focusedTab) + '"][data-closed="false"] .frame');
      focusedTab = null;
      if (frame && document.activeElement !== frame) frame.focus({ preventScroll: true });
    }
  });

  // frameOf returns the frame under a takeover the event is on, or null.
  function frameOf(ev) {
    var frame = ev.target.closest && ev.target.closest(".frame");
    if (!frame) return null;
    var tabs = frame.closest(".live-tabs"), tab = frame.closest(".live-tab");
    if (!tabs || tabs.getAttribute("data-control") !== "true" || !tab || tab.getAttribute("data-closed") === "true") return null;
    return frame;
  }

  function clamp(v) { return Math.min(Math.max(v, 0), 1); }

  // at is the pointer's position as fractions of the frame's image.
  function at(frame, ev) {
    var img = frame.querySelector("img.shot") || frame;
    var r = img.getBoundingClientRect();
    return { x: clamp((ev.clientX - r.left) / r.width), y: clamp((ev.clientY - r.top) / r.height) };
  }

  function modifiers(ev) {
    return (ev.altKey ? 1 : 0) | (ev.ctrlKey ? 2 : 0) | (ev.metaKey ? 4 : 0) | (ev.shiftKey ? 8 : 0);
  }

  var buttons = ["left", "middle", "right"];
  var queue = [], sending = false;

  // push queues an event; the tab is marked data-sending until its input
  // has reached the server.
  function push(frame, e) {
    var tab = frame.closest(".live-tab");
    var url = tab.getAttribute("data-input-url");
    if (queue.length > 500) queue.splice(0, queue.length - 500);
    queue.push({ url: url, event: e, tab: tab });
    tab.setAttribute("data-sending", "true");
    flush();
  }

  function showError(tab, text) {
    var p = tab.querySelector(".live-error");
    if (!p) {
      p = document.createElement("p");
      p.className = "alert bad live-error";
      p.setAttribute("role", "alert");
      tab.appendChild(p);
    }
    p.textContent = text;
  }

  function flush() {
    if (sending || !queue.length) return;
    var url = queue[0].url, tab = queue[0].tab, batch = [];
    while (queue.length && queue[0].url === url && batch.length < 200) batch.push(queue.shift().event);
    sending = true;
    fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ events: batch })
    }).then(function (res) {
      if (res.ok) {
        var p = tab.querySelector(".live-error");
        if (p) p.remove();
        return;
      }
      return res.json().then(function (j) {
        showError(tab, (j && j.error && j.error.message) || ("input refused: HTTP " + res.status));
      });
    }).catch(function (err) {
      showError(tab, "input not sent: " + err);
    }).then(function () {
      sending = false;
      if (!queue.some(function (q) { return q.tab === tab; })) tab.removeAttribute("data-sending");
      flush();
    });
  }

  function mouse(type) {
    return function (ev) {
      var frame = frameOf(ev);
      if (!frame) return;
      if (type !== "mousemove") ev.preventDefault();
      if (type === "mousedown") frame.focus({ preventScroll: true });
      var p = at(frame, ev);
      var e = { type: type, x: p.x, y: p.y, buttons: ev.buttons, modifiers: modifiers(ev) };
      if (type !== "mousemove") {
        e.button = buttons[ev.button] || "left";
        e.clickCount = ev.detail || 1;
      }
      push(frame, e);
    };
  }
  document.addEventListener("mousemove", mouse("mousemove"));
  document.addEventListener("mousedown", mouse("mousedown"));
  document.addEventListener("mouseup", mouse("mouseup"));
  document.addEventListener("dragstart", function (ev) { if (frameOf(ev)) ev.preventDefault(); });
  document.addEventListener("contextmenu", function (ev) { if (frameOf(ev)) ev.preventDefault(); });
  document.addEventListener("wheel", function (ev) {
    var frame = frameOf(ev);
    if (!frame) return;
    ev.preventDefault();
    var k = ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? 400 : 1;
    var p = at(frame, ev);
    push(frame, { type: "wheel", x: p.x, y: p.y, deltaX: ev.deltaX * k, deltaY: ev.deltaY * k, modifiers: modifiers(ev) });
  }, { passive: false });

  function key(type) {
    return function (ev) {
      var frame = frameOf(ev);
      if (!frame || document.activeElement !== frame) return;
      ev.preventDefault();
      push(frame, { type: type, key: ev.key, code: ev.code, keyCode: ev.keyCode, modifiers: modifiers(ev) });
    };
  }
  document.addEventListener("keydown", key("keydown"));
  document.addEventListener("keyup", key("keyup"));
  document.addEventListener("paste", function (ev) {
    var frame = frameOf(ev);
    if (!frame || document.activeElement !== frame) return;
    var text = ev.clipboardData && ev.clipboardData.getData("text/plain");
    if (!text) return;
    ev.preventDefault();
    push(frame, { type: "text", text: text });
  });
})();
