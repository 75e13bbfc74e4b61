// Live regions. A region updated over SSE (sse-swap) is not replaced while its reader is busy
// in it: a confirmation box is open (Fork from here…, Re-run…), or it shows an older page
// than the newest (data-older, e.g. the checkpoint history's older checkpoints); the next
// update after that lands as usual. The "live" marks (.live, hidden in the page: without
// this script and htmx nothing updates) are shown, and say "reconnecting…" while the page's
// stream is down.
(function () {
  "use strict";
  document.addEventListener("htmx:sseBeforeMessage", function (e) {
    var region = e.target;
    if (!region || !region.querySelector) return;
    if (region.querySelector("details[open], [data-older]")) {
      e.preventDefault();
    }
  });
  function marks(down) {
    document.querySelectorAll(".live").forEach(function (el) {
      el.hidden = false;
      if (down === undefined) return;
      el.classList.toggle("down", down);
      if (!el.dataset.word) el.dataset.word = el.textContent;
      el.textContent = down ? "reconnecting…" : el.dataset.word;
    });
  }
  document.addEventListener("htmx:sseOpen", function () { marks(false); });
  document.addEventListener("htmx:sseError", function () { marks(true); });
  document.addEventListener("htmx:afterSwap", function () { marks(); });
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { marks(); });
  } else {
    marks();
  }
})();
