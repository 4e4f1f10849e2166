// The page root (#session) carries data-turn-state and data-agent-state for CSS and the keyboard (and
// data-waiting, data-turns, data-stop-reason for embed.js); the server
// updates the status header (the root holds the socket and is never swapped), so after each message from the
// server the root takes the header's values. A change of turn state is announced as a "turn-state-change"
// event on the root (detail: before, after) for whoever reacts to it (tab-title.js). Keeps no state: the
// root's attributes are the state.

const root = document.getElementById("session");

function mirrorTurnState() {
  const status = document.getElementById("session-status");
  if (!status) {
    return;
  }
  const before = root.dataset.turnState;
  for (const key of ["turnState", "agentState", "waiting", "turns", "stopReason"]) {
    if (status.dataset[key] !== undefined && root.dataset[key] !== status.dataset[key]) {
      root.dataset[key] = status.dataset[key];
    }
  }
  if (before !== root.dataset.turnState) {
    root.dispatchEvent(new CustomEvent("turn-state-change", { detail: { before: before, after: root.dataset.turnState } }));
  }
}

if (root) {
  root.addEventListener("htmx:wsAfterMessage", mirrorTurnState);
}
