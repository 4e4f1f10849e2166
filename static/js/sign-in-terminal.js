// The sign-in terminal: an xterm.js terminal (npm @xterm/xterm, vendored at set-up) on the socket of the command's
// pseudo-terminal (webclient/web/sign_in_socket.py). Its output comes as binary frames, keystrokes and the window's
// size go back as JSON. xterm.js is loaded only when a sign-in terminal is on the page.
//
// The page's Content-Security-Policy refuses <style> elements (style-src 'self', no 'unsafe-inline'), and xterm.js
// writes its sizes and colours into some. While it builds its screen, a <style> it makes is an inert element whose
// text goes into a constructed stylesheet (adoptedStyleSheets), which the policy allows: script-made rules from
// our own script, never markup from the agent.

const root = document.getElementById("session");
const running = new Map(); // element id -> {socket, term, sheets, observer, resize}

function socketUrl(path) {
  const url = new URL(path, window.location.href);
  url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
  return url.href;
}

function loadCss(href) {
  if (document.querySelector('link[data-xterm-css]')) {
    return;
  }
  const link = document.createElement("link");
  link.rel = "stylesheet";
  link.href = href;
  link.dataset.xtermCss = "";
  document.head.appendChild(link);
}

// Runs `build` with document.createElement("style") giving an element whose text becomes a constructed sheet.
function withAdoptedStyles(build, sheets) {
  const original = document.createElement;
  document.createElement = function (name, options) {
    if (String(name).toLowerCase() !== "style") {
      return original.call(document, name, options);
    }
    const holder = original.call(document, "xterm-style");
    holder.hidden = true;
    const sheet = new CSSStyleSheet();
    sheets.push(sheet);
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
    new MutationObserver(function () {
      sheet.replaceSync(holder.textContent || "");
    }).observe(holder, { childList: true, characterData: true, subtree: true });
    return holder;
  };
  try {
    return build();
  } finally {
    document.createElement = original;
  }
}

async function start(element) {
  const entry = { socket: null, term: null, sheets: [], closed: false };
  running.set(element.id, entry);
  loadCss(element.dataset.xtermCss);
  const [{ Terminal }, { FitAddon }, { WebLinksAddon }] = await Promise.all([
    import(element.dataset.xterm),
    import(element.dataset.xtermFit),
    import(element.dataset.xtermLinks),
  ]);
  if (entry.closed) {
    return;
  }
  const term = new Terminal({
    cursorBlink: true,
    fontSize: 13,
    scrollback: 1000,
    theme: { background: "#16161b", foreground: "#d7d7dc" },
  });
  const fit = new FitAddon();
  term.loadAddon(fit);
  // A login prints the link to open in the person's own browser: a click opens it in a new tab, without a
  // reference back to this page. Only web links: the command's output is the agent's.
  term.loadAddon(
    new WebLinksAddon(function (event, uri) {
      if (/^https?:\/\//i.test(uri)) {
        window.open(uri, "_blank", "noopener,noreferrer");
      }
    }),
  );
  withAdoptedStyles(function () {
    term.open(element);
  }, entry.sheets);
  entry.term = term;
  const send = function (message) {
    if (entry.socket && entry.socket.readyState === WebSocket.OPEN) {
      entry.socket.send(JSON.stringify(message));
    }
  };
  const sendSize = function () {
    try {
      fit.fit();
    } catch (error) {
      return; // not laid out yet
    }
    send({ type: "resize", columns: term.cols, rows: term.rows });
  };
  // Keys typed in the terminal are the command's: the page's shortcuts (Escape stops the turn, which would give up
  // the sign-in) must not see them.
  element.addEventListener("keydown", function (event) {
    event.stopPropagation();
  });
  term.onData(function (data) {
    send({ type: "input", data: data });
  });
  entry.resize = new ResizeObserver(sendSize);
  entry.resize.observe(element);

  const connect = function () {
    const socket = new WebSocket(socketUrl(element.dataset.url));
    socket.binaryType = "arraybuffer";
    entry.socket = socket;
    socket.addEventListener("open", function () {
      term.reset(); // the server sends what the command showed so far, from the start
      sendSize();
      // The whole terminal in view first (clear of the sticky sign-in line: scroll-padding), so that focusing its
      // cursor scrolls no further: the lines above the cursor (a login's link, its code) stay in sight.
      element.scrollIntoView({ block: "nearest" });
      term.focus();
    });
    socket.addEventListener("message", function (event) {
      if (typeof event.data === "string") {
        const message = JSON.parse(event.data);
        if (message.type === "exit") {
          entry.ended = true;
          term.write("\r\n\x1b[2m[" + message.how + "]\x1b[0m\r\n");
        }
        return;
      }
      term.write(new Uint8Array(event.data));
    });
    socket.addEventListener("close", function (event) {
      // 1013: the page fell behind the output; anything else but an exit: the server went or the network did.
      if (!entry.closed && !entry.ended && (event.code === 1013 || event.code === 1006)) {
        window.setTimeout(connect, 1000);
      }
    });
  };
  connect();
}

function stop(id) {
  const entry = running.get(id);
  running.delete(id);
  if (!entry) {
    return;
  }
  entry.closed = true;
  if (entry.socket) {
    entry.socket.close();
  }
  if (entry.resize) {
    entry.resize.disconnect();
  }
  if (entry.term) {
    entry.term.dispose();
  }
  document.adoptedStyleSheets = document.adoptedStyleSheets.filter(function (sheet) {
    return !entry.sheets.includes(sheet);
  });
}

function scan() {
  const present = new Set();
  document.querySelectorAll('[data-role="sign-in-terminal"]').forEach(function (element) {
    present.add(element.id);
    if (!running.has(element.id)) {
      start(element);
    }
  });
  Array.from(running.keys()).forEach(function (id) {
    if (!present.has(id)) {
      stop(id);
    }
  });
}

if (root) {
  scan();
  root.addEventListener("htmx:wsAfterMessage", scan);
  document.body.addEventListener("htmx:oobAfterSwap", scan);
}
