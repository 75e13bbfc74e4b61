// Drafts: what a user types into a form marked data-draft="KEY" is kept in the tab's
// sessionStorage until the form is answered, so a submission that bounces (the session
// ended, the sign-in page came in between) does not lose it. When the form is shown again
// with the values the server filled in, the kept values replace them and the form's
// [data-draft-note] is shown. The server makes KEY name the user too, so a draft is never
// put back for someone else. A page or fragment with data-draft-clear="PREFIX" (a decision
// was recorded) forgets every draft whose key starts with PREFIX; logging out forgets them
// all. Only textareas and number inputs are kept; hidden fields (tokens) never are.
(function () {
  "use strict";
  var prefix = "weft-draft:";
  var store = null;
  try { store = window.sessionStorage; } catch (e) { return; } // storage off: nothing to do

  function fields(form) {
    return Array.prototype.filter.call(form.elements, function (el) {
      return el.name && !el.disabled &&
        (el.tagName === "TEXTAREA" || (el.tagName === "INPUT" && el.type === "number"));
    });
  }

  function save(form) {
    var kept = {};
    var changed = false;
    fields(form).forEach(function (el) {
      kept[el.name] = el.value;
      if (el.value !== el.defaultValue) changed = true;
    });
    if (changed) store.setItem(prefix + form.dataset.draft, JSON.stringify(kept));
    else store.removeItem(prefix + form.dataset.draft);
  }

  // forget removes every kept draft whose key starts with start.
  function forget(start) {
    for (var i = store.length - 1; i >= 0; i--) {
      var k = store.key(i);
      if (k && k.indexOf(start) === 0) store.removeItem(k);
    }
  }

  function restore(root) {
    root.querySelectorAll("[data-draft-clear]").forEach(function (el) {
      forget(prefix + el.dataset.draftClear);
    });
    root.querySelectorAll("form[data-draft]").forEach(function (form) {
      var raw = store.getItem(prefix + form.dataset.draft);
      if (!raw) return;
      var kept;
      try { kept = JSON.parse(raw); } catch (e) { return; }
      var restored = false;
      fields(form).forEach(function (el) {
        var v = kept[el.name];
        if (typeof v === "string" && v !== el.value && el.value === el.defaultValue) {
          el.value = v;
          restored = true;
        }
      });
      var note = form.querySelector("[data-draft-note]");
      if (restored && note) note.hidden = false;
    });
  }

  document.addEventListener("submit", function (e) {
    var action = e.target.getAttribute && e.target.getAttribute("action");
    if (action === "/logout") forget(prefix);
  });
  document.addEventListener("input", function (e) {
    var form = e.target.form;
    if (form && form.dataset.draft) save(form);
  });
  // The whole page once, then every fragment htmx swaps in.
  document.addEventListener("DOMContentLoaded", function () { restore(document); });
  document.addEventListener("htmx:load", function (e) {
    if (e.target && e.target.querySelectorAll) restore(e.target.parentNode || e.target);
  });
})();
