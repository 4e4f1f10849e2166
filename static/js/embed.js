// A page embedded in a portal's iframe (webclient/web/embed.py, docs/embedding.md).
//
// The start page: its form starts the session; when the page is in a frame it is sent at once (only the sites
// WEBCLIENT_FRAME_ANCESTORS names may frame it), opened on its own it waits for the Start button.
//
// The session page tells its host what happens, by postMessage to the origins the server lists in
// html[data-message-origins] (origins written out in WEBCLIENT_FRAME_ANCESTORS) and to its own: "session-created"
// (sessionId, url), "turn-started", "turn-ended" (stopReason), "waiting" (kind: permission or question),
// "session-ended". It reads #session's data attributes, which turn-state.js keeps up to date after each message
// from the server, never the socket's HTML. It takes two commands, only from its parent window and only when that
// window's origin is one of those: {type: "prompt", text} sends a prompt as the prompt box does, {type: "stop"}
// presses Stop. Anything else is ignored. Its state: what it last told the host. A link opens in a tab of its
// own.

const html = document.documentElement;
const ACCENT = /^#[0-9a-fA-F]{6}$/;
const MAX_PROMPT = 20000;

function allowedOrigins() {
  const listed = (html.dataset.messageOrigins || "").split(" ").filter(Boolean);
  return Array.from(new Set([window.location.origin, ...listed]));
}

const framed = window.parent !== window;
const origins = allowedOrigins();

function tell(type, detail) {
  if (!framed) {
    return;
  }
  const message = Object.assign({ source: "webclient", type: type }, detail || {});
  // Each origin in turn: the browser hands the message over only when the parent's origin is that one.
  for (const origin of origins) {
    window.parent.postMessage(message, origin);
  }
}

function dressInAccent() {
  const accent = html.dataset.accent;
  if (!accent || !ACCENT.test(accent)) {
    return;
  }
  const red = parseInt(accent.slice(1, 3), 16);
  const green = parseInt(accent.slice(3, 5), 16);
  const blue = parseInt(accent.slice(5, 7), 16);
  const light = 0.299 * red + 0.587 * green + 0.114 * blue > 150;
  html.style.setProperty("--accent", accent);
  html.style.setProperty("--accent-text", light ? "#0d0d10" : "#ffffff");
}

function startWhenFramed() {
  const form = document.querySelector('[data-role="embed-start-form"][data-autostart]');
  if (form && framed) {
    form.requestSubmit();
  }
}

function watchSession(root) {
  // created=1: the start page's form has just made this session; ended=1: its End button has just ended it. A
  // reload is neither: both flags go from the address (the theme stays), once told.
  const params = new URLSearchParams(window.location.search);
  const created = params.get("created") === "1";
  const endedHere = params.get("ended") === "1";
  if (created || endedHere) {
    params.delete("created");
    params.delete("ended");
    const query = params.toString();
    window.history.replaceState(null, "", window.location.pathname + (query ? "?" + query : "") + window.location.hash);
  }
  if (created) {
    const url = new URL(root.dataset.sessionUrl, window.location.href).href;
    tell("session-created", { sessionId: root.dataset.sessionId, url: url });
  }
  // Told so far: turns started (the page's first count, unless it has just created the session and the host has
  // heard of none), whether a turn is under way, what it waits for, whether the session has ended.
  let turns = created ? 0 : Number(root.dataset.turns || 0);
  let inTurn = !created && turns > 0 && isBusy();
  let waiting = created ? "" : root.dataset.waiting || "";
  let ended = !created && !endedHere && root.dataset.turnState === "ended";

  function isBusy() {
    return root.dataset.turnState === "running" || root.dataset.turnState === "awaiting-permission";
  }

  function turnEnded() {
    inTurn = false;
    waiting = "";
    tell("turn-ended", { stopReason: root.dataset.stopReason || null });
  }

  function update() {
    const now = Number(root.dataset.turns || 0);
    if (now < turns) {
      turns = now; // the server restarted and counts again from nought
    }
    while (turns < now) {
      if (inTurn) {
        turnEnded(); // one that started and ended between two updates of the page
      }
      turns += 1;
      inTurn = true;
      tell("turn-started", {});
    }
    const waitingNow = root.dataset.waiting || "";
    if (inTurn && waitingNow && waitingNow !== waiting) {
      tell("waiting", { kind: waitingNow });
    }
    waiting = waitingNow;
    if (inTurn && !isBusy()) {
      turnEnded();
    }
    const endedNow = root.dataset.turnState === "ended";
    if (endedNow && !ended) {
      tell("session-ended", { agentState: root.dataset.agentState || null });
    }
    ended = endedNow;
  }

  function prompt(text) {
    const composer = document.getElementById("composer");
    const input = document.getElementById("prompt-input");
    if (!composer || !input || typeof text !== "string" || !text.trim() || text.length > MAX_PROMPT) {
      return;
    }
    input.value = text;
    composer.requestSubmit();
  }

  function stop() {
    const button = document.querySelector('[data-action="cancel"]');
    if (button) {
      button.click();
    }
  }

  window.addEventListener("message", function (event) {
    if (!framed || event.source !== window.parent || !origins.includes(event.origin)) {
      return;
    }
    const command = event.data;
    if (!command || typeof command !== "object") {
      return;
    }
    if (command.type === "prompt") {
      prompt(command.text);
    } else if (command.type === "stop") {
      stop();
    }
  });
  // The End button's form leaves the page: the page that comes back (ended=1) tells the host, not this one too.
  root.addEventListener("submit", function (event) {
    if (event.target.querySelector('[data-action="end-session"]')) {
      ended = true;
    }
  });
  root.addEventListener("htmx:wsAfterMessage", update);
  update();
}

// A link (the agent's, a rule's page from a card, the Changes view) opens in a tab of its own: the embedded page
// moves by its forms and htmx only, so the frame keeps the session, and neither another site nor a page with the
// site's chrome shows inside the portal.
function keepLinksOutOfTheFrame() {
  document.addEventListener("click", function (event) {
    const link = event.target instanceof Element ? event.target.closest("a[href]") : null;
    if (!framed || !link || link.target || link.hasAttribute("hx-get") || link.getAttribute("href").startsWith("#")) {
      return;
    }
    link.target = "_blank";
    link.rel = "noopener";
  });
}

dressInAccent();
startWhenFramed();
keepLinksOutOfTheFrame();
const session = document.getElementById("session");
if (session) {
  watchSession(session);
}
