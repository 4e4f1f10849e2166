// The connection: while the page's socket is down nothing on the page can reach the agent, so the page says
// so (#connection) and its controls are disabled; a session the server no longer knows (it restarted) is not
// retried. State kept here: the connection's state ("open", "reconnecting", "signed-out", "gone"), how many
// times in a row the socket was reopened, and the timer that asks the server again while signed out.

const root = document.getElementById("session");

const RECONNECT_CODES_HANDLED_BY_HTMX = [1006, 1011, 1012, 1013];
// The server closes with this when the person's part in a shared session changed (watch <-> drive): the page
// loads again, with the composer and the buttons or without them (webclient/web/presence.py).
const ROLE_CHANGED = 4001;
const POLICY_VIOLATION = 1008;
const SIGNED_OUT_RECHECK_MS = 5000;
const OFFLINE_CONTROLS = "[data-option-id], [data-auth-method], #prompt-input, #attach-input, [data-action=send], " +
  "[data-action=cancel], #session-controls select, #session-controls input, #prompt-queue textarea, " +
  "#prompt-queue button, [data-action=diff-mode]";
const CONNECTION_TEXT = {
  reconnecting: "Reconnecting…",
  "signed-out": "Signed out: open the sign-in link again",
  gone: "This session is gone: the server restarted",
  revoked: "This session is no longer shared with you",
  deleted: "This session was deleted",
};
// Why the server shut the page out, as its socket's close reason says (webclient/web/presence.py): the page
// then says so rather than blame a restart.
const GONE_REASONS = ["revoked", "deleted"];

let connection = "open";
let goneBecause = "";
let reconnectAttempts = 0;
let recheck = 0;

function showConnection(state) {
  connection = state;
  const status = document.getElementById("connection");
  root.dataset.connection = state;
  document.body.classList.toggle("disconnected", state !== "open");
  if (status) {
    status.hidden = state === "open";
    status.textContent = CONNECTION_TEXT[state === "gone" && goneBecause ? goneBecause : state] || "";
  }
  setControlsOffline(state !== "open");
}

// Only what this code disabled is enabled again (a permission already answered stays disabled).
function setControlsOffline(offline) {
  if (offline) {
    root.querySelectorAll(OFFLINE_CONTROLS).forEach(function (control) {
      if (!control.disabled) {
        control.disabled = true;
        control.dataset.offline = "";
      }
    });
  } else {
    root.querySelectorAll("[data-offline]").forEach(function (control) {
      control.disabled = false;
      delete control.dataset.offline;
    });
  }
}

// Why the socket is down, asked of the page's own URL: 404 means the server no longer has this session
// (it restarted), 401/403 or a redirect to sign in means the sign-in token changed; anything else (the
// server is away) means keep trying. Signed out, the page asks again every few seconds (the user may sign
// in in another tab) and, if the server refused the socket for good (1008), reconnects once it may.
function checkSession(socketWrapper, closeCode) {
  clearTimeout(recheck);
  fetch(location.href, { method: "HEAD", cache: "no-store", credentials: "same-origin", redirect: "manual" }).then(function (response) {
    if (connection === "open" || connection === "gone") {
      return;
    }
    if (response.status === 404) {
      showConnection("gone");
    } else if (response.status === 401 || response.status === 403 || response.type === "opaqueredirect") {
      showConnection("signed-out");
      recheck = setTimeout(function () { checkSession(socketWrapper, closeCode); }, SIGNED_OUT_RECHECK_MS);
    } else if (connection === "signed-out") {
      showConnection("reconnecting");
      if (closeCode === POLICY_VIOLATION) {
        socketWrapper.reconnect();
      }
    }
  }, function () { /* the server is away: keep "Reconnecting…" */ });
}

if (root) {
  // The ws extension opens each socket through htmx.createWebSocket; once the session is gone it gets one
  // that never opens (so it never closes and is never retried).
  const openWebSocket = htmx.createWebSocket;
  htmx.createWebSocket = function (url) {
    if (connection === "gone") {
      return { readyState: 3, OPEN: 1, send: function () {}, close: function () {}, addEventListener: function () {} };
    }
    return openWebSocket(url);
  };

  // The socket belongs to the page root (it holds ws-connect and is never swapped): its events come from there.
  root.addEventListener("htmx:wsOpen", function () {
    reconnectAttempts = 0;
    showConnection("open");
  });

  // htmx's ws extension only reconnects after abnormal closes; a server restart or a proxy closing
  // cleanly (1000/1001/1005) would leave the page dead. Reconnect those too, with jittered backoff.
  root.addEventListener("htmx:wsClose", function (event) {
    if (connection === "gone") {
      return;
    }
    if (connection === "open") {
      showConnection("reconnecting");
    }
    const code = event.detail.event.code;
    if (code === POLICY_VIOLATION && GONE_REASONS.includes(event.detail.event.reason)) {
      goneBecause = event.detail.event.reason;
    }
    if (code === ROLE_CHANGED) {
      location.reload();
      return;
    }
    checkSession(event.detail.socketWrapper, code);
    if (code === POLICY_VIOLATION || RECONNECT_CODES_HANDLED_BY_HTMX.includes(code)) {
      return;
    }
    const delay = Math.random() * Math.min(30000, 500 * 2 ** reconnectAttempts);
    reconnectAttempts += 1;
    setTimeout(function () {
      event.detail.socketWrapper.reconnect();
    }, delay);
  });
}
