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
