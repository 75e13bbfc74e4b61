// Tick all: a checkbox marked data-tick-all="F" ticks or clears every checkbox of form F
// (those with form="F", as the dead letters' rows have), and shows whether they are all,
// some or none ticked as they change. It is hidden in the page (it does
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
    var el = e.target;
    if (!el.hasAttribute) return;
    if (el.hasAttribute("data-tick-all")) {
      boxes(el.getAttribute("data-tick-all")).forEach(function (b) { b.checked = el.checked; });
      return;
    }
    // A box of the form: the form's "tick all" follows (ticked, cleared, or part-way).
    var form = el.getAttribute("form");
    if (el.type !== "checkbox" || !form) return;
    var all = document.querySelector('[data-tick-all="' + form + '"]');
    if (!all) return;
    var ticked = 0, list = boxes(form);
    list.forEach(function (b) { if (b.checked) ticked++; });
    all.checked = ticked === list.length;
    all.indeterminate = ticked > 0 && ticked < list.length;
  });
  document.addEventListener("htmx:afterSwap", show); // the list is swapped in after actions
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", show);
  } else {
    show();
  }
})();
