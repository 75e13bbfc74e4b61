// Per-item decisions: a button marked data-approve-all="NAME" picks "approve" for every
// item of the list NAME that has no decision yet (a rejection already chosen stays). It does
// nothing without this script; each item's own choice works without it.
(function () {
  "use strict";
  document.addEventListener("click", function (e) {
    var b = e.target.closest ? e.target.closest("[data-approve-all]") : null;
    if (!b) return;
    var list = document.querySelector('[data-items="' + b.getAttribute("data-approve-all") + '"]');
    if (!list) return;
    list.querySelectorAll("fieldset.item-decision").forEach(function (fs) {
      if (fs.querySelector("input[type=radio]:checked")) return;
      var ok = fs.querySelector('input[type=radio][value="approve"]');
      if (ok) ok.checked = true;
    });
  });
})();
