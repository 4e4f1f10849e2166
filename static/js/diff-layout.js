// Diffs show unified or side by side. The choice is remembered in a cookie (so the server renders the right
// one) and in localStorage (which outlives a cleared cookie); changing it re-renders the open side panel
// (the server re-renders the diffs in the thread itself). State kept here: the choice, in both places.

import { keep, recall } from "./stored.js";

const DIFF_MODE_KEY = "acp-webclient.diff-mode";
const main = document.querySelector("main");

function setDiffMode(mode) {
  keep(DIFF_MODE_KEY, mode);
  document.cookie = "diff_mode=" + mode + "; path=/; max-age=31536000; samesite=strict";
}

const remembered = recall(DIFF_MODE_KEY);
if (remembered && !document.cookie.includes("diff_mode=" + remembered)) {
  setDiffMode(remembered);
}

// Diffs are in the thread, the side panel or a page of their own: all inside the page's <main>.
if (main) {
  main.addEventListener("click", function (event) {
    const modeButton = event.target instanceof Element ? event.target.closest("[data-action=diff-mode]") : null;
    if (!modeButton) {
      return;
    }
    setDiffMode(modeButton.dataset.mode);
    const panel = document.querySelector("#side-panel-body [data-url]");
    if (panel && document.body.classList.contains("panel-open")) { // a closed panel stays closed
      htmx.ajax("GET", panel.dataset.url, "#side-panel-body");
    }
  });
}
