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
  // message (an error or a notice) rather than the top of the page.
  document.addEventListener("htmx:afterSettle", function (e) {
    var cfg = e.detail && e.detail.requestConfig;
    if (!cfg || cfg.verb === "get") return;
    var main = document.querySelector("main") || document;
    var msg = main.querySelector(".alert[role=alert], .alert[role=status]");
    if (!msg) return;
    if (!msg.hasAttribute("tabindex")) msg.setAttribute("tabindex", "-1");
    msg.focus();
  });
})();
