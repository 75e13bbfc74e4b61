// Tick all: a checkbox marked data-tick-all="F" ticks or clears every checkbox of form F
// (those with form="F", as the dead letters' rows have). It is hidden in the page (it does
// nothing without this script) and shown here, with the element around it that hides it.
(function () {
  "use strict";
  function boxes(form) {
    return document.querySelectorAll('input[type=checkbox][form="' + form + '"]');
  }
  function show() {
    document.querySelectorAll("[data-tick-all]").forEach(function (all) {
      all.hidden = false;
      var wrap = all.closest("[hidden]");
      if (wrap) wrap.hidden = false;
    });
  }
  document.addEventListener("change", function (e) {
    var all = e.target;
    if (!all.hasAttribute || !all.hasAttribute("data-tick-all")) return;
    boxes(all.getAttribute("data-tick-all")).forEach(function (b) { b.checked = all.checked; });
  });
  document.addEventListener("htmx:afterSwap", show); // the list is swapped in after actions
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", show);
  } else {
    show();
  }
})();
