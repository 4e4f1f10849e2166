// A tool-call card updated in parts (webclient/web/live/card_updates.py sends what changed, not the whole card).
// - A head that comes alone (its status changed with something else of it) gives the card its status (data-status
//   and status class), so the styles and the scripts and tests that read the card see it.
// - Records (a socket message that starts with RECORD; live-text.js takes the message from htmx and applies the
//   records that name a message, which these never do): "tN" a title, set as text (or so many characters cut from
//   its end and these added); "sN" a known status and its label, set on the card, its head and its chip; "iN" an
//   edit of the inner HTML of the card's k-th content item, HTML our templates rendered and escaped: "r" and the
//   whole, or "=length" of the string the page holds and splices (at, cut, added) applied to it in turn.
// - A card's raw JSON is fetched when one of its <details> opens.
// State kept here: the inner HTML of the content items the socket brought or edited (dropped once the page let go).

const RECORD = "\x1e";
const FIELD = "\x1f";
const CARD_RECORD = /^([tsi])([0-9]+)$/;
// A content item in HTML the socket brought: its inner HTML up to the empty comment our template ends it with.
const ITEM_HTML = /<div class="tool-item" id="(entry-[0-9]+-item-[0-9]+)">([\s\S]*?)<!----><\/div>/g;
const root = document.getElementById("session");
const heldItems = new Map();
let sweepAt = 200; // held items past this many: those the page let go of (scrolled away, a resync) are dropped

function takeStatus(card, status, statusClass) {
  card.dataset.status = status;
  for (const name of Array.from(card.classList)) {
    if (name.startsWith("status-")) {
      card.classList.remove(name);
    }
  }
  card.classList.add(statusClass);
}

function setStatus(id, status, label) {
  const card = document.getElementById(id);
  const head = document.getElementById(id + "-head");
  const chip = head && head.querySelector('[data-role="status"]');
  if (!card || !chip) {
    return;
  }
  takeStatus(card, status, "status-" + status);
  head.dataset.status = status;
  head.dataset.statusClass = "status-" + status;
  chip.className = "status-chip status-" + status;
  chip.textContent = label;
}

function editItem(id, fields) {
  const item = document.getElementById(id);
  if (!item) {
    heldItems.delete(id);
    return;
  }
  let html;
  if (fields[0] === "r") {
    html = fields[1];
  } else {
    html = heldItems.get(id);
    if (html === undefined || html.length !== Number(fields[0].slice(1))) {
      heldItems.delete(id); // not the string the server edits (it should never be): the item stays as it is
      return;
    }
    for (let k = 1; k + 2 < fields.length; k += 3) {
      const at = Number(fields[k]);
      html = html.slice(0, at) + fields[k + 2] + html.slice(at + Number(fields[k + 1] || 0));
    }
  }
  heldItems.set(id, html);
  item.innerHTML = html;
  htmx.process(item); // its links and buttons (a diff's Split, a resource's Open) ask the server as htmx's do
}

function sweep() {
  if (heldItems.size <= sweepAt) {
    return;
  }
  for (const key of Array.from(heldItems.keys())) {
    if (!document.getElementById(key)) {
      heldItems.delete(key);
    }
  }
  sweepAt = Math.max(200, 2 * heldItems.size); // the next sweep once as many again came
}

function applyRecord(record) {
  const fields = record.split(FIELD);
  const found = CARD_RECORD.exec(fields[0]);
  if (!found) {
    return; // a message's edit (live-text.js)
  }
  const id = "entry-" + found[2];
  if (found[1] === "t") {
    const title = document.getElementById(id + "-title");
    if (title && fields.length > 2) {
      const kept = title.textContent;
      title.textContent = kept.slice(0, kept.length - Number(fields[1] || 0)) + fields[2];
    } else if (title) {
      title.textContent = fields[1];
    }
  } else if (found[1] === "s") {
    setStatus(id, fields[1], fields[2]);
  } else {
    editItem(id + "-item-" + fields[1], fields.slice(2));
  }
}

if (root) {
  root.addEventListener("htmx:oobAfterSwap", function (event) {
    const head = event.target;
    if (!(head instanceof HTMLElement) || !head.matches(".tool-call > .tool-head[data-status]")) {
      return;
    }
    takeStatus(head.parentElement, head.dataset.status, head.dataset.statusClass);
  });

  root.addEventListener("htmx:wsBeforeMessage", function (event) {
    const message = event.detail.message;
    if (typeof message !== "string") {
      return;
    }
    if (message.startsWith(RECORD)) {
      for (const record of message.split(RECORD).slice(1)) {
        applyRecord(record);
      }
    } else if (message.includes('class="tool-item"')) {
      // (Before htmx puts the message in the page: the sweep waits for the message's end, below.)
      // The items as strings, exactly as they came: an edit of one is spliced into what the server knows it sent.
      for (const found of message.matchAll(ITEM_HTML)) {
        heldItems.set(found[1], found[2]);
      }
    }
  });
}

if (root) {
  root.addEventListener("htmx:wsAfterMessage", sweep);
}

// A card's raw JSON (its input, output, everything the agent sent) is fetched when its <details> opens, from the
// URL its .raw div names (webclient/web/pages/raw_parts.py answers escaped text): one attribute for the card, not a
// request's four for each part. "toggle" does not bubble: caught on the way down.
if (root) {
  root.addEventListener("toggle", function (event) {
    const details = event.target;
    if (!(details instanceof HTMLDetailsElement) || !details.open) {
      return;
    }
    const raw = details.parentElement;
    const part = (details.dataset.role || "").replace(/^raw-/, "");
    const pre = details.querySelector(":scope > pre");
    if (!raw || !raw.matches(".raw[data-url]") || !part || !pre) {
      return;
    }
    // Its own source: requests from one element (the body, by default) wait for each other, and many may open at once.
    const url = raw.dataset.url + "?part=" + encodeURIComponent(part);
    htmx.ajax("GET", url, { source: details, target: pre, swap: "innerHTML" });
  }, true);
}
