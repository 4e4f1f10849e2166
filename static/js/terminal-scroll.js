// Terminals scroll inside their card; one the user left at its bottom follows new output when the server
// re-renders it. State kept here: which terminals were at their bottom before the last message.

const root = document.getElementById("session");
const terminalsAtBottom = new Set();

if (root) {
  root.addEventListener("htmx:wsBeforeMessage", function () {
    terminalsAtBottom.clear();
    root.querySelectorAll(".terminal").forEach(function (terminal) {
      const body = terminal.querySelector(".terminal-body");
      if (body && body.scrollHeight - body.scrollTop - body.clientHeight < 24) {
        terminalsAtBottom.add(terminal.id);
      }
    });
  });

  root.addEventListener("htmx:wsAfterMessage", function () {
    terminalsAtBottom.forEach(function (id) {
      const body = document.querySelector("#" + CSS.escape(id) + " .terminal-body");
      if (body) {
        body.scrollTop = body.scrollHeight;
      }
    });
  });
}
