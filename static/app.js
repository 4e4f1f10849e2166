// The few behaviours htmx does not give us. No state lives here: the server renders everything.
(function () {
  "use strict";

  const RECONNECT_CODES_HANDLED_BY_HTMX = [1006, 1011, 1012, 1013];
  const POLICY_VIOLATION = 1008;
  let reconnectAttempts = 0;
  let stickToBottom = true;

  function sessionRoot() {
    return document.getElementById("session");
  }

  // The page root carries data-turn-state and data-agent-state; the server updates the status
  // header (the root holds the socket and is never swapped), we mirror them.
  function mirrorTurnState() {
    const root = sessionRoot();
    const status = document.getElementById("session-status");
    if (!root || !status) {
      return;
    }
    for (const key of ["turnState", "agentState"]) {
      if (status.dataset[key] && root.dataset[key] !== status.dataset[key]) {
        root.dataset[key] = status.dataset[key];
      }
    }
  }

  function nearBottom() {
    const doc = document.scrollingElement || document.documentElement;
    return doc.scrollHeight - doc.scrollTop - doc.clientHeight < 80;
  }

  document.addEventListener("htmx:wsBeforeMessage", function () {
    stickToBottom = nearBottom();
  });

  document.addEventListener("htmx:wsAfterMessage", function () {
    mirrorTurnState();
    if (stickToBottom) {
      const doc = document.scrollingElement || document.documentElement;
      doc.scrollTop = doc.scrollHeight;
    }
  });

  document.addEventListener("htmx:wsOpen", function () {
    reconnectAttempts = 0;
    document.body.classList.remove("disconnected");
  });

  // htmx's ws extension only reconnects after abnormal closes; a server restart or a proxy closing
  // cleanly (1000/1001/1005) would leave the page dead. Reconnect those too, with jittered backoff.
  document.addEventListener("htmx:wsClose", function (event) {
    const code = event.detail.event.code;
    document.body.classList.add("disconnected");
    if (code === POLICY_VIOLATION || RECONNECT_CODES_HANDLED_BY_HTMX.includes(code)) {
      return;
    }
    const delay = Math.random() * Math.min(30000, 500 * 2 ** reconnectAttempts);
    reconnectAttempts += 1;
    setTimeout(function () {
      event.detail.socketWrapper.reconnect();
    }, delay);
  });

  // Enter sends, Shift+Enter makes a new line; Escape stops the turn.
  document.addEventListener("keydown", function (event) {
    const target = event.target;
    if (target instanceof HTMLTextAreaElement && target.name === "prompt") {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        if (target.value.trim() && target.form) {
          target.form.requestSubmit();
        }
      }
    }
    if (event.key === "Escape") {
      const root = sessionRoot();
      const stop = document.querySelector('[data-action="cancel"]');
      if (root && stop && root.dataset.turnState !== "idle" && root.dataset.turnState !== "ended") {
        stop.click();
      }
    }
  });

  // One click answers a permission: the other buttons of the group go quiet until the server re-renders.
  document.addEventListener("click", function (event) {
    const button = event.target instanceof Element ? event.target.closest("[data-option-id]") : null;
    if (!button) {
      return;
    }
    setTimeout(function () {
      const group = button.closest(".options");
      if (group) {
        group.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
      }
    }, 0);
  });

  document.addEventListener("DOMContentLoaded", function () {
    const doc = document.scrollingElement || document.documentElement;
    doc.scrollTop = doc.scrollHeight;
  });
})();
