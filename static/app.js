// The behaviours htmx does not give us. The server renders everything and holds the session's state; this file
// keeps only how this tab looks at it: the scroll position and what the user opened or closed, the tab title's
// alert, the connection's state and reconnect attempts, when each elapsed clock was first seen, and the user's
// choices in localStorage (notifications, following the agent in the side panel, the diff layout, which a cookie
// also tells the server).
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
    const before = root.dataset.turnState;
    for (const key of ["turnState", "agentState"]) {
      if (status.dataset[key] && root.dataset[key] !== status.dataset[key]) {
        root.dataset[key] = status.dataset[key];
      }
    }
    if (before !== root.dataset.turnState) {
      turnStateChanged(before, root.dataset.turnState);
    }
    const title = status.querySelector("[data-role=title]");
    if (title) {
      baseTitle = shortTitle(title.textContent.trim()) + " · ACP web client";
      if (!alerting) {
        document.title = baseTitle;
      }
    }
  }

  // The tab shows at most TITLE_LIMIT characters of the title (as the server renders it: webclient/render/text.py).
  const TITLE_LIMIT = 80;

  function shortTitle(text) {
    const chars = Array.from(text);
    return chars.length <= TITLE_LIMIT ? text : chars.slice(0, TITLE_LIMIT - 1).join("").trimEnd() + "…";
  }

  // -- When the user is elsewhere: the tab title, and a notification if they allowed them -----------

  const NOTIFY_KEY = "acp-webclient.notify";
  const LONG_TURN_MS = 10000;
  let baseTitle = document.title;
  let alerting = false;
  let turnStarted = 0;

  function busy(state) {
    return state === "running" || state === "awaiting-permission";
  }

  function turnStateChanged(before, after) {
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

  function alertUser(label, body) {
    alerting = true;
    document.title = "● " + label + " — " + baseTitle;
    if ("Notification" in window && Notification.permission === "granted" && localStorage.getItem(NOTIFY_KEY) === "on") {
      const root = sessionRoot();
      const notification = new Notification(label + " — " + baseTitle, { body: body, tag: root ? root.dataset.sessionId : "acp" });
      notification.onclick = function () {
        window.focus();
        notification.close();
      };
    }
  }

  document.addEventListener("visibilitychange", function () {
    if (!document.hidden && alerting) {
      alerting = false;
      document.title = baseTitle;
    }
  });

  function showNotifyButton() {
    const button = document.querySelector("[data-action=notify]");
    if (!button || !("Notification" in window)) {
      return;
    }
    const on = Notification.permission === "granted" && localStorage.getItem(NOTIFY_KEY) === "on";
    button.hidden = Notification.permission === "denied";
    button.textContent = on ? "Notifications on" : "Notify me";
    button.setAttribute("aria-pressed", on ? "true" : "false");
  }

  document.addEventListener("click", function (event) {
    const button = event.target instanceof Element ? event.target.closest("[data-action=notify]") : null;
    if (!button) {
      return;
    }
    if (button.getAttribute("aria-pressed") === "true") {
      localStorage.setItem(NOTIFY_KEY, "off");
      showNotifyButton();
      return;
    }
    Notification.requestPermission().then(function (permission) {
      localStorage.setItem(NOTIFY_KEY, permission === "granted" ? "on" : "off");
      showNotifyButton();
    });
  });

  function nearBottom() {
    const doc = document.scrollingElement || document.documentElement;
    return doc.scrollHeight - doc.scrollTop - doc.clientHeight < 80;
  }

  function scrollToBottom() {
    const doc = document.scrollingElement || document.documentElement;
    doc.scrollTop = doc.scrollHeight;
  }

  // "Jump to latest": shown while the user reads above the bottom; the page follows only at the bottom.
  function updateJump() {
    const jump = document.querySelector("[data-action=jump-to-latest]");
    if (jump) {
      jump.hidden = nearBottom();
    }
  }

  window.addEventListener("scroll", updateJump, { passive: true });

  // The sticky top bar and the dock cover the top and the bottom of the window: their heights go to CSS
  // (--topbar-height, --dock-height, used by scroll-padding) so nothing is scrolled into view beneath them.
  // A constructed stylesheet, not a style attribute: the page's CSP allows none.
  function trackStickyHeights() {
    const topbar = document.querySelector(".topbar");
    const dock = document.querySelector(".dock");
    if (!topbar || !dock || !("adoptedStyleSheets" in document)) {
      return;
    }
    const sheet = new CSSStyleSheet();
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
    const observer = new ResizeObserver(function () {
      sheet.replaceSync(":root { --topbar-height: " + topbar.offsetHeight + "px; --dock-height: " + dock.offsetHeight + "px; }");
    });
    observer.observe(topbar);
    observer.observe(dock);
  }

  document.addEventListener("click", function (event) {
    if (event.target instanceof Element && event.target.closest("[data-action=jump-to-latest]")) {
      scrollToBottom();
      updateJump();
    }
  });

  // Terminals scroll inside their card; one the user left at its bottom follows new output.
  const terminalsAtBottom = new Set();

  function rememberTerminalScroll() {
    terminalsAtBottom.clear();
    document.querySelectorAll(".terminal").forEach(function (terminal) {
      const body = terminal.querySelector(".terminal-body");
      if (body && body.scrollHeight - body.scrollTop - body.clientHeight < 24) {
        terminalsAtBottom.add(terminal.id);
      }
    });
  }

  function restoreTerminalScroll() {
    terminalsAtBottom.forEach(function (id) {
      const body = document.querySelector("#" + CSS.escape(id) + " .terminal-body");
      if (body) {
        body.scrollTop = body.scrollHeight;
      }
    });
  }

  // What the user opened or closed stays so when the server re-renders a card (same diff sent again, ...).
  const userToggled = new Map();

  document.addEventListener("toggle", function (event) {
    const details = event.target;
    if (details instanceof HTMLDetailsElement && details.id && event.isTrusted) {
      userToggled.set(details.id, details.open);
    }
  }, true);

  function restoreToggles() {
    userToggled.forEach(function (open, id) {
      const details = document.getElementById(id);
      if (details instanceof HTMLDetailsElement && details.open !== open) {
        details.open = open;
      }
    });
  }

  // "Show earlier" puts older entries above the page's first one: keep that entry (what the user reads) where it
  // was. Scroll anchoring would, but Chromium does not anchor at the very top, where the sentinel fires.
  let threadTop = null;

  function rememberThreadTop(message) {
    const first = typeof message === "string" && message.includes("afterend:#thread-start")
      ? document.querySelector("#thread-start + *") : null;
    threadTop = first ? { element: first, top: first.getBoundingClientRect().top } : null;
  }

  function restoreThreadTop() {
    if (threadTop && threadTop.element.isConnected) {
      window.scrollBy(0, threadTop.element.getBoundingClientRect().top - threadTop.top);
    }
    threadTop = null;
  }

  document.addEventListener("htmx:wsBeforeMessage", function (event) {
    stickToBottom = nearBottom();
    rememberTerminalScroll();
    rememberThreadTop(event.detail.message);
  });

  // A "Copy" button on every code block of the agent's Markdown (absolutely placed: nothing moves).
  function addCopyButtons() {
    document.querySelectorAll(".md pre:not(.has-copy)").forEach(function (pre) {
      pre.classList.add("has-copy");
      const button = document.createElement("button");
      button.type = "button";
      button.className = "copy-code";
      button.dataset.action = "copy-code";
      button.dataset.label = "Copy"; // shown by CSS, so the label never becomes part of the message's text
      button.setAttribute("aria-label", "Copy code");
      pre.append(button);
    });
  }

  document.addEventListener("click", function (event) {
    const button = event.target instanceof Element ? event.target.closest("[data-action=copy-code]") : null;
    if (!button) {
      return;
    }
    const code = button.parentElement.querySelector("code") || button.parentElement;
    const done = function (label) {
      button.dataset.label = label;
      setTimeout(function () { button.dataset.label = "Copy"; }, 1500);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(code.innerText).then(function () { done("Copied"); }, function () { done("Copy failed"); });
    } else {
      const range = document.createRange(); // no clipboard API over plain http: select it for Ctrl+C
      range.selectNodeContents(code);
      window.getSelection().removeAllRanges();
      window.getSelection().addRange(range);
      done("Press Ctrl+C");
    }
  });

  document.addEventListener("htmx:wsAfterMessage", function () {
    addCopyButtons();
    mirrorTurnState();
    restoreToggles();
    restoreTerminalScroll();
    restoreThreadTop();
    if (stickToBottom) {
      scrollToBottom();
    }
    updateJump();
  });

  // -- The side panel: a file at a line, the session's changes, a diff ------------------------------

  const FOLLOW_KEY = "acp-webclient.follow";
  const DIFF_MODE_KEY = "acp-webclient.diff-mode";

  function showPanel() {
    document.body.classList.add("panel-open");
    const target = document.querySelector("#side-panel-body .target");
    if (target) {
      target.scrollIntoView({ block: "center" });
    }
  }

  document.addEventListener("htmx:afterSwap", function (event) {
    if (event.detail.target && event.detail.target.id === "side-panel-body") {
      showPanel();
    }
  });

  document.addEventListener("htmx:oobAfterSwap", function (event) {
    const target = event.detail.target;
    if (!target) {
      return;
    }
    if (target.id === "side-panel-body") {
      showPanel();
    } else if (target.id === "changes-count") {
      htmx.trigger(document.body, "changes-updated");
    }
  });

  document.addEventListener("change", function (event) {
    const input = event.target;
    if (input instanceof HTMLInputElement && input.id === "follow-toggle") {
      localStorage.setItem(FOLLOW_KEY, input.checked ? "on" : "off");
    }
  });

  function restoreFollow() {
    const toggle = document.getElementById("follow-toggle");
    if (toggle && localStorage.getItem(FOLLOW_KEY) === "on") {
      toggle.checked = true;
      toggle.dispatchEvent(new Event("change", { bubbles: true }));
    }
  }

  // Unified or side by side: remembered in a cookie (so the server renders the right one) and here.
  function setDiffMode(mode) {
    localStorage.setItem(DIFF_MODE_KEY, mode);
    document.cookie = "diff_mode=" + mode + "; path=/; max-age=31536000; samesite=strict";
  }

  document.addEventListener("click", function (event) {
    const target = event.target instanceof Element ? event.target : null;
    if (!target) {
      return;
    }
    if (target.closest("[data-action=close-panel]")) {
      document.body.classList.remove("panel-open");
    }
    const modeButton = target.closest("[data-action=diff-mode]");
    if (modeButton) {
      setDiffMode(modeButton.dataset.mode);
      const panel = document.querySelector("#side-panel-body [data-url]");
      if (panel && document.body.classList.contains("panel-open")) { // a closed panel stays closed
        htmx.ajax("GET", panel.dataset.url, "#side-panel-body");
      }
    }
  });

  // -- The connection: while the socket is down nothing on the page can reach the agent, so the page says so
  // and its controls are disabled; a session the server no longer knows (it restarted) is not retried.

  const OFFLINE_CONTROLS = "[data-option-id], [data-auth-method], #prompt-input, #attach-input, [data-action=send], [data-action=cancel], " +
    "#session-controls select, #session-controls input, #prompt-queue textarea, #prompt-queue button, [data-action=diff-mode]";
  const CONNECTION_TEXT = {
    reconnecting: "Reconnecting…",
    "signed-out": "Signed out: open the sign-in link again",
    gone: "This session is gone: the server restarted",
  };
  let connection = "open";

  function showConnection(state) {
    connection = state;
    const root = sessionRoot();
    const status = document.getElementById("connection");
    if (root) {
      root.dataset.connection = state;
    }
    document.body.classList.toggle("disconnected", state !== "open");
    if (status) {
      status.hidden = state === "open";
      status.textContent = CONNECTION_TEXT[state] || "";
    }
    setControlsOffline(state !== "open");
  }

  // Only what this code disabled is enabled again (a permission already answered stays disabled).
  function setControlsOffline(offline) {
    if (offline) {
      document.querySelectorAll(OFFLINE_CONTROLS).forEach(function (control) {
        if (!control.disabled) {
          control.disabled = true;
          control.dataset.offline = "";
        }
      });
    } else {
      document.querySelectorAll("[data-offline]").forEach(function (control) {
        control.disabled = false;
        delete control.dataset.offline;
      });
    }
  }

  // Why the socket is down, asked of the page's own URL: 404 means the server no longer has this session
  // (it restarted), 401/403 or a redirect to sign in means the sign-in token changed; anything else (the
  // server is away) means keep trying. Signed out, the page asks again every few seconds (the user may sign
  // in in another tab) and, if the server refused the socket for good (1008), reconnects once it may.
  const SIGNED_OUT_RECHECK_MS = 5000;
  let recheck = 0;

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

  // The ws extension opens each socket through htmx.createWebSocket; once the session is gone it gets one
  // that never opens (so it never closes and is never retried).
  const openWebSocket = htmx.createWebSocket;
  htmx.createWebSocket = function (url) {
    if (connection === "gone") {
      return { readyState: 3, OPEN: 1, send: function () {}, close: function () {}, addEventListener: function () {} };
    }
    return openWebSocket(url);
  };

  document.addEventListener("htmx:wsOpen", function () {
    reconnectAttempts = 0;
    showConnection("open");
    restoreFollow();
  });

  // htmx's ws extension only reconnects after abnormal closes; a server restart or a proxy closing
  // cleanly (1000/1001/1005) would leave the page dead. Reconnect those too, with jittered backoff.
  document.addEventListener("htmx:wsClose", function (event) {
    if (connection === "gone") {
      return;
    }
    if (connection === "open") {
      showConnection("reconnecting");
    }
    const code = event.detail.event.code;
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

  function editable(element) {
    return element instanceof HTMLElement && (element.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(element.tagName));
  }

  // Enter sends, Shift+Enter makes a new line; Escape stops the turn; 1-9 (Alt+1-9 while typing)
  // answer the first open permission question.
  document.addEventListener("keydown", function (event) {
    const target = event.target;
    if (target instanceof HTMLTextAreaElement && target.name === "prompt") {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        const attached = target.form && target.form.querySelector("#composer-attachments .chip");
        if ((target.value.trim() || attached) && target.form) {
          target.form.requestSubmit();
        }
      }
    } else if (target instanceof HTMLTextAreaElement && target.closest(".queued-form")) {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        target.blur(); // the change is sent on blur
      }
    }
    const digit = /^(?:Digit|Numpad)([1-9])$/.exec(event.code);
    if (digit && !event.ctrlKey && !event.metaKey && (event.altKey || !editable(target))) {
      const option = document.querySelector('.tool-call.waiting .options button[data-key="' + digit[1] + '"]:not(:disabled)');
      if (option) {
        event.preventDefault();
        option.click();
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

  // -- Elapsed time while the agent starts or signs in -----------------------------------------------
  // The server renders [data-elapsed] as "m:ss" when it renders the header; this counts on from there,
  // by the browser's own clock from when it saw that element (so clocks need not agree). Looked at four
  // times a second, so a fresh header starts counting at once; cheaper than the server re-rendering the
  // header every second for every open tab.
  const elapsedSeen = new WeakMap();

  function tickElapsed() {
    const now = Date.now();
    document.querySelectorAll("[data-elapsed]").forEach(function (element) {
      if (!elapsedSeen.has(element)) {
        const [minutes, seconds] = element.dataset.elapsed.split(":").map(Number);
        elapsedSeen.set(element, now - ((minutes || 0) * 60 + (seconds || 0)) * 1000);
      }
      const total = Math.floor((now - elapsedSeen.get(element)) / 1000);
      const text = Math.floor(total / 60) + ":" + String(total % 60).padStart(2, "0");
      if (element.textContent !== text) {
        element.textContent = text;
      }
    });
  }
  setInterval(tickElapsed, 250);

  document.addEventListener("DOMContentLoaded", function () {
    trackStickyHeights();
    scrollToBottom();
    showNotifyButton();
    addCopyButtons();
    const mode = localStorage.getItem(DIFF_MODE_KEY);
    if (mode && !document.cookie.includes("diff_mode=" + mode)) {
      setDiffMode(mode);
    }
  });
})();
