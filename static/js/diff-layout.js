// Diffs show unified or side by side. The choice is remembered in a cookie (so the server renders the right
// one) and in localStorage (which outlives a cleared cookie); changing it re-renders the open side panel
// (the server re-renders the diffs in the thread itself). State kept here: the choice, in both places.

const DIFF_MODE_KEY = "acp-webclient.diff-mode";
const main = document.querySelector("main");

// A frame of another site's page may be refused storage (third-party storage blocked): then nothing is remembered.
function stored(key) {
  try { return localStorage.getItem(key); } catch { return null; }
}

function store(key, value) {
  try { localStorage.setItem(key, value); } catch { /* not remembered */ }
}

// The cookie is for the app's pages only: the path prefix it is served under is where this file is, less /static/.
const ROOT = new URL(import.meta.url).pathname.replace(/\/static\/.*$/, "") || "/";
// Inside a frame, a strict cookie may not be kept (the frame's page may be of another site): over HTTPS it is
// partitioned instead, as the server's cookies are there.
const SAME_SITE = window.self !== window.top && location.protocol === "https:"
  ? "samesite=none; secure; partitioned" : "samesite=strict";

function setDiffMode(mode) {
  store(DIFF_MODE_KEY, mode);
  document.cookie = "diff_mode=" + mode + "; path=" + ROOT + "; max-age=31536000; " + SAME_SITE;
}

const remembered = stored(DIFF_MODE_KEY);
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
