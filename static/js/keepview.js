// Keep view: a live region (sse-swap) is not replaced while its reader is busy in it: a
// confirmation box is open (Fork from here…, Re-run…), or it shows an older page than the
// newest (data-older, e.g. the checkpoint history's older checkpoints). The next update
// after that lands as usual; without this script the regions just update.
(function () {
  "use strict";
  document.addEventListener("htmx:sseBeforeMessage", function (e) {
    var region = e.target;
    if (!region || !region.querySelector) return;
    if (region.querySelector("details[open], [data-older]")) {
      e.preventDefault();
    }
  });
})();
