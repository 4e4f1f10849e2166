// The tab's title follows the session's title (shortened as the server shortens it), and while the tab is
// hidden it says when the agent waits for the user or finished a long turn, with a system notification if
// the user turned them on (notify.js). State kept here: the title without the alert, the alert shown (if any),
// and when the current turn started.

import { notificationsWanted } from "./notify.js";

const root = document.getElementById("session");

// The tab shows at most TITLE_LIMIT characters of the title (as the server renders it: webclient/render/text.py).
const TITLE_LIMIT = 80;
const LONG_TURN_MS = 10000;

let baseTitle = document.title;
let alerting = "";
let turnStarted = 0;

function shortTitle(text) {
  const chars = Array.from(text);
  return chars.length <= TITLE_LIMIT ? text : chars.slice(0, TITLE_LIMIT - 1).join("").trimEnd() + "…";
}

function busy(state) {
  return state === "running" || state === "awaiting-permission";
}

function alertUser(label, body) {
  alerting = label;
  document.title = "● " + label + " — " + baseTitle;
  if (notificationsWanted()) {
    const notification = new Notification(label + " — " + baseTitle, { body: body, tag: root.dataset.sessionId });
    notification.onclick = function () {
      window.focus();
      notification.close();
    };
  }
}

function turnStateChanged(event) {
  const { before, after } = event.detail;
  if (after === "running" && !busy(before)) {
    turnStarted = Date.now();
  }
  if (!document.hidden) {
    return;
  }
  if (after === "awaiting-permission") {
    alertUser("Waiting for you", "The agent asks for your permission.");
  } else if (after === "idle" && busy(before) && Date.now() - turnStarted >= LONG_TURN_MS) {
    alertUser("Done", "The agent finished its turn.");
  }
}

function followSessionTitle() {
  const title = document.querySelector("#session-status [data-role=title]");
  if (title) {
    baseTitle = shortTitle(title.textContent.trim()) + " · ACP web client";
    // The title may come with the state that raised the alert (a first prompt titles the session): the alert
    // names the session as it is now.
    document.title = alerting ? "● " + alerting + " — " + baseTitle : baseTitle;
  }
}

if (root) {
  root.addEventListener("turn-state-change", turnStateChanged);
  root.addEventListener("htmx:wsAfterMessage", followSessionTitle);
  // Back on the tab: the alert has been seen.
  document.addEventListener("visibilitychange", function () {
    if (!document.hidden && alerting) {
      alerting = "";
      document.title = baseTitle;
    }
  });
}
