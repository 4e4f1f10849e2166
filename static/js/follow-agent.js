// "Follow the agent" (the side panel shows each file the agent touches) is remembered across reloads and
// told to the server again whenever the socket opens (the server forgets it with the socket). State kept
// here: the choice, in localStorage.

const FOLLOW_KEY = "acp-webclient.follow";
const root = document.getElementById("session");
const toggle = document.getElementById("follow-toggle");

// A frame of another site's page may be refused storage (third-party storage blocked): then nothing is remembered.
function stored(key) {
  try { return localStorage.getItem(key); } catch { return null; }
}

function store(key, value) {
  try { localStorage.setItem(key, value); } catch { /* not remembered */ }
}

if (root && toggle) {
  toggle.addEventListener("change", function () {
    store(FOLLOW_KEY, toggle.checked ? "on" : "off");
  });

  root.addEventListener("htmx:wsOpen", function () {
    if (stored(FOLLOW_KEY) === "on") {
      toggle.checked = true;
      toggle.dispatchEvent(new Event("change", { bubbles: true })); // the form sends it (ws-send on change)
    }
  });
}
