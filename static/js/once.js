// Once: a form marked data-once is sent once. Its submit buttons are disabled just after the
// browser has taken the submission (so the clicked button's value still goes), and a second
// click while the page loads does nothing: a double click does not start two runs.
(function () {
  "use strict";
  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (!form.hasAttribute || !form.hasAttribute("data-once")) return;
    if (form.dataset.sent) {
      e.preventDefault();
      return;
    }
    form.dataset.sent = "1";
    setTimeout(function () {
      form.querySelectorAll("button[type=submit], button:not([type])").forEach(function (b) {
        b.disabled = true;
      });
      form.setAttribute("aria-busy", "true");
    }, 0);
  });
  // A form closed elsewhere (a review answered in another tab or by another reviewer): an
  // element with data-closes="<form id>" swapped in disables that form's send buttons, so
  // what was typed stays readable but cannot be sent into a refusal.
  document.addEventListener("htmx:load", function (e) {
    var el = e.detail && e.detail.elt;
    if (!el || !el.querySelectorAll) return;
    var closers = Array.prototype.slice.call(el.querySelectorAll("[data-closes]"));
    if (el.hasAttribute && el.hasAttribute("data-closes")) closers.push(el);
    closers.forEach(function (c) {
      var form = document.getElementById(c.getAttribute("data-closes"));
      if (!form) return;
      form.querySelectorAll("button[type=submit], button:not([type])").forEach(function (b) {
        b.disabled = true;
        b.title = "This form can no longer be sent";
      });
    });
  });
  // Back from the next page (the browser's page cache), the form is usable again.
  window.addEventListener("pageshow", function (e) {
    if (!e.persisted) return;
    document.querySelectorAll("form[data-once]").forEach(function (form) {
      delete form.dataset.sent;
      form.removeAttribute("aria-busy");
      form.querySelectorAll("button").forEach(function (b) { b.disabled = false; });
    });
  });
  // After a form's answer is swapped in (htmx), the keyboard goes to what it says: its
  // message (an error or a notice) in what was swapped, unless the user is typing elsewhere.
  document.addEventListener("htmx:afterSettle", function (e) {
    var d = e.detail, cfg = d && d.requestConfig;
    if (!cfg || cfg.verb === "get") return;
    var scope = (d.target && d.target.isConnected && d.target) || (d.elt && d.elt.isConnected && d.elt) || document.querySelector("main");
    var msg = scope && scope.querySelector(".alert[role=alert], .alert[role=status]");
    if (!msg) msg = document.querySelector("#alerts .alert");
    if (!msg) return;
    var a = document.activeElement;
    if (a && a !== document.body && /^(INPUT|TEXTAREA|SELECT)$/.test(a.tagName) && !(scope && scope.contains(a))) return;
    if (!msg.hasAttribute("tabindex")) msg.setAttribute("tabindex", "-1");
    msg.focus();
  });
})();
