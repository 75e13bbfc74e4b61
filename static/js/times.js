// Ages: an element with data-since="UNIX_MS" shows how long ago that was, as the server
// wrote it (page.Ago: "42s ago", "5m ago", "3h 7m ago", "2d ago"), and keeps it current
// while the page stays open, so a page that waits (a thread paused for review) does not
// read "0s ago" for hours. It ticks every second, as ages under a minute count seconds, and
// once more after each htmx swap.
(function () {
  "use strict";
  function ago(ms) {
    var s = Math.max(0, Math.floor(ms / 1000));
    if (s < 60) return s + "s ago";
    var m = Math.floor(s / 60);
    if (m < 60) return m + "m ago";
    var h = Math.floor(m / 60);
    if (h < 48) return h + "h " + (m % 60) + "m ago";
    return Math.floor(h / 24) + "d ago";
  }
  function tick() {
    var now = Date.now();
    document.querySelectorAll("[data-since]").forEach(function (el) {
      var t = Number(el.dataset.since);
      if (t > 0) {
        var text = ago(now - t);
        if (el.textContent !== text) el.textContent = text;
      }
    });
  }
  setInterval(tick, 1000);
  document.addEventListener("htmx:afterSwap", tick);
})();
