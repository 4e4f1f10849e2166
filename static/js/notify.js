// "Notify me": the user's opt-in to system notifications while the tab is hidden (tab-title.js sends them).
// State kept here: the choice, in localStorage, so it outlives the page.

import { keep, recall } from "./stored.js";

const NOTIFY_KEY = "acp-webclient.notify";
const button = document.querySelector("[data-action=notify]");

// Whether a notification may be shown now: the browser allows it and the user asked for them.
export function notificationsWanted() {
  return "Notification" in window && Notification.permission === "granted" && recall(NOTIFY_KEY) === "on";
}

function showNotifyButton() {
  const on = notificationsWanted();
  button.hidden = Notification.permission === "denied";
  button.textContent = on ? "Notifications on" : "Notify me";
  button.setAttribute("aria-pressed", on ? "true" : "false");
}

if (button && "Notification" in window) {
  showNotifyButton();
  button.addEventListener("click", function () {
    if (button.getAttribute("aria-pressed") === "true") {
      keep(NOTIFY_KEY, "off");
      showNotifyButton();
      return;
    }
    Notification.requestPermission().then(function (permission) {
      keep(NOTIFY_KEY, permission === "granted" ? "on" : "off");
      showNotifyButton();
    });
  });
}
