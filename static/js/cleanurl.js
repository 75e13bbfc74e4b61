// Clean URL: a page showing a one-time notice of the request that led to it (?started=,
// ?forked= after a form post) marks it data-clean-url with its own address without that
// query; the address bar is set to it, so reloading or bookmarking the page does not show
// the notice again.
(function () {
  "use strict";
  function clean() {
    var el = document.querySelector("[data-clean-url]");
    if (!el) return;
    var to = el.getAttribute("data-clean-url");
    if (to && to.charAt(0) === "/" && to.charAt(1) !== "/") {
      history.replaceState(history.state, "", to);
    }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", clean);
  } else {
    clean();
  }
})();
