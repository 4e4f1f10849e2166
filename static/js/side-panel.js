// The side panel (a file at a line, the session's changes, a diff) opens when content arrives in it,
// whether the user asked for it (hx-get) or the server pushed it (following the agent), scrolled to the
// marked line; its close button closes it. Keeps no state: the body's class panel-open says whether it is open.

const panel = document.getElementById("side-panel");

function showPanel() {
  document.body.classList.add("panel-open");
  const target = panel.querySelector("#side-panel-body .target");
  if (target) {
    target.scrollIntoView({ block: "center" });
  }
}

if (panel) {
  // The panel's body is swapped (its content by hx-get, the whole element when pushed): the aside is not.
  panel.addEventListener("htmx:afterSwap", function (event) {
    if (event.detail.target && event.detail.target.id === "side-panel-body") {
      showPanel();
    }
  });
  panel.addEventListener("htmx:oobAfterSwap", function (event) {
    if (event.detail.target && event.detail.target.id === "side-panel-body") {
      showPanel();
    }
  });
  panel.addEventListener("click", function (event) {
    if (event.target instanceof Element && event.target.closest("[data-action=close-panel]")) {
      document.body.classList.remove("panel-open");
    }
  });
}
