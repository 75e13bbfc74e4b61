// Live regions. A region updated over SSE (sse-swap) is not replaced while its reader is busy
// in it: a confirmation box is open (Fork from here…, Re-run…), or it shows an older page
// than the newest (data-older, e.g. the checkpoint history's older checkpoints). The update
// is kept, and swapped in when the confirmation closes (an older page is left for the
// reader, whose "Newest" link reads the region again). The "live" marks (.live, hidden in the
// page: without this script and htmx nothing updates) show once the page's stream is open
// (at once where a page polls instead), and say "reconnecting…" while it is down, or "signed
// out" with a link to sign in again once the session has ended.
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
  var signedOut = false; // the page's session ended: the marks say so and stay
  function marks(down) {
    if (signedOut) return;
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
  // A stream that fails because the session ended (signed out in another tab, idle past its
  // timeout) would read "reconnecting…" for good: ask whether the browser is still signed in
  // (at most every 5 s), and if not, the marks say so with a way back to this page.
  var asking = false;
  function askSession() {
    if (asking || signedOut || !window.fetch) return;
    asking = true;
    fetch("/session", { headers: { "HX-Request": "true" }, cache: "no-store", credentials: "same-origin" })
      .then(function (r) { if (r.status === 401) showSignedOut(); })
      .catch(function () {})
      .then(function () { setTimeout(function () { asking = false; }, 5000); });
  }
  function showSignedOut() {
    signedOut = true;
    var back = "/login?next=" + encodeURIComponent(location.pathname + location.search);
    document.querySelectorAll(".live").forEach(function (el) {
      el.hidden = false;
      el.classList.add("down");
      el.textContent = "";
      var a = document.createElement("a");
      a.href = back;
      a.textContent = "signed out: sign in again";
      el.appendChild(a);
    });
  }
  document.addEventListener("htmx:sseOpen", function () { marks(false); });
  document.addEventListener("htmx:sseError", function () { marks(true); askSession(); });
  document.addEventListener("htmx:afterSwap", function () { marks(); });
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { marks(); });
  } else {
    marks();
  }
})();
