// "Follow the agent" (the side panel shows each file the agent touches) is remembered across reloads and
// told to the server again whenever the socket opens (the server forgets it with the socket). State kept
// here: the choice, in localStorage.

import { keep, recall } from "./stored.js";

const FOLLOW_KEY = "acp-webclient.follow";
const root = document.getElementById("session");
const toggle = document.getElementById("follow-toggle");

if (root && toggle) {
  toggle.addEventListener("change", function () {
    keep(FOLLOW_KEY, toggle.checked ? "on" : "off");
  });

  root.addEventListener("htmx:wsOpen", function () {
    if (recall(FOLLOW_KEY) === "on") {
      toggle.checked = true;
      toggle.dispatchEvent(new Event("change", { bubbles: true })); // the form sends it (ws-send on change)
    }
  });
}
