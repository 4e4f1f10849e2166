// "Notify me": the user's opt-in to system notifications while the tab is hidden (tab-title.js sends them).
// State kept here: the choice, in localStorage, so it outlives the page.

const NOTIFY_KEY = "acp-webclient.notify";
const button = document.querySelector("[data-action=notify]");

// A frame of another site's page may be refused storage (third-party storage blocked): then nothing is remembered.
function stored(key) {
  try { return localStorage.getItem(key); } catch { return null; }
}

function store(key, value) {
  try { localStorage.setItem(key, value); } catch { /* not remembered */ }
}

// Whether a notification may be shown now: the browser allows it and the user asked for them.
export function notificationsWanted() {
  return "Notification" in window && Notification.permission === "granted" && stored(NOTIFY_KEY) === "on";
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
      store(NOTIFY_KEY, "off");
      showNotifyButton();
      return;
    }
    Notification.requestPermission().then(function (permission) {
      store(NOTIFY_KEY, permission === "granted" ? "on" : "off");
      showNotifyButton();
    });
  });
}
