// The web desk's one script: while an update is still going out, its delivery section is
// asked for again every few seconds and swapped in (the page works the same without it:
// reload). It waits while the tab is hidden, backs off when the network fails, slows down
// once nothing waits, and never replaces the section while focus is inside it.
(function () {
  "use strict";
  var live = document.querySelector(".live[data-src]");
  if (!live || !window.fetch) return;
  var url = live.getAttribute("data-src");
  var delay = 3000;
  var last = live.innerHTML;
  function next(ms) { window.setTimeout(tick, ms); }
  function tick() {
    if (document.hidden || live.contains(document.activeElement)) { next(delay); return; }
    fetch(url, { credentials: "same-origin", headers: { Accept: "text/html" } })
      .then(function (r) { if (!r.ok || r.redirected) throw new Error(String(r.status)); return r.text(); })
      .then(function (html) {
        if (html !== last && !live.contains(document.activeElement)) {
          live.innerHTML = html;
          last = html;
        }
        delay = live.querySelector("[data-done]") ? 15000 : 3000;
        next(delay);
      })
      .catch(function () { delay = Math.min(delay * 2, 60000); next(delay); });
  }
  next(delay);
})();
