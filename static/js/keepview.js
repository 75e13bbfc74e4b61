// Live regions. A region updated over SSE (sse-swap) is not replaced while its reader is busy
// in it: a confirmation box is open (Fork from here…, Re-run…), or it shows an older page
// than the newest (data-older, e.g. the checkpoint history's older checkpoints). The update
// is kept, and swapped in when the confirmation closes (an older page is left for the
// reader, whose "Newest" link reads the region again). The "live" marks (.live, hidden in the
// page: without this script and htmx nothing updates) show once the page's stream is open
// (at once where a page polls instead), and say "reconnecting…" while it is down.
(function () {
  "use strict";
  document.addEventListener("htmx:sseBeforeMessage", function (e) {
    var region = e.target;
    if (!region || !region.querySelector) return;
    if (region.querySelector("details[open], [data-older]")) {
      e.preventDefault();
      region._heldUpdate = e.detail && e.detail.data;
    }
  });
  document.addEventListener("toggle", function (e) {
    var details = e.target;
    if (!details || details.tagName !== "DETAILS" || details.open) return;
    var region = details.closest("[sse-swap]");
    if (!region || !region._heldUpdate || region.querySelector("details[open], [data-older]")) return;
    var html = region._heldUpdate;
    region._heldUpdate = null;
    htmx.swap(region, html, { swapStyle: "innerHTML" });
  }, true);
  function marks(down) {
    document.querySelectorAll(".live").forEach(function (el) {
      var streamed = document.querySelector("[sse-connect]"); // the page has a stream
      if (down === undefined) {
        if (!streamed) el.hidden = false; // a polled region: live as soon as htmx runs
        return;
      }
      if (!streamed) return;
      el.hidden = false;
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
