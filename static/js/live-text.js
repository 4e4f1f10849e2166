// A streaming message's live rest, edited in place (webclient/web/live/message_edits.py): a socket message that
// starts with RECORD holds records, not HTML. A record names a message (its number for "entry-N") and says: cut so
// many characters from the end of the rest's HTML before where text arrives ("r": all of it), add this HTML, move
// so many of its first characters into the finished Markdown, and (when given) the new HTML after where text
// arrives. The rest is drawn again from those two strings.
// State kept here: the two strings of each message being edited (dropped when its rest is empty).

const RECORD = "\x1e";
const FIELD = "\x1f";
const root = document.getElementById("session");
const held = new Map();

function editMessage(id, cut, moved, added, after) {
  const live = document.getElementById(id + "-live");
  const finished = document.getElementById(id + "-md");
  if (!live || !finished) {
    held.delete(id); // the page no longer shows it (a resync replaced the thread)
    return;
  }
  const rest = cut === "r" ? { before: "", after: "" } : held.get(id) || { before: "", after: "" };
  const kept = cut && cut !== "r" ? rest.before.slice(0, rest.before.length - Number(cut)) : rest.before;
  let before = kept + added;
  if (moved) {
    finished.insertAdjacentHTML("beforeend", before.slice(0, Number(moved)));
    before = before.slice(Number(moved));
  }
  if (after !== undefined) {
    rest.after = after;
  }
  if (moved) {
    // A new element where the rest was: the old one, pushed down by the blocks moved above it, would count as a
    // layout shift though nothing on screen moved.
    const fresh = live.cloneNode(false);
    fresh.innerHTML = before + rest.after;
    live.replaceWith(fresh);
  } else {
    live.innerHTML = before + rest.after;
  }
  if (before || rest.after) {
    held.set(id, { before: before, after: rest.after });
  } else {
    held.delete(id);
  }
}

function apply(message) {
  for (const record of message.split(RECORD).slice(1)) {
    const fields = record.split(FIELD);
    const id = /^[0-9]+$/.test(fields[0]) ? "entry-" + fields[0] : fields[0];
    editMessage(id, fields[1], fields[2], fields[3], fields[4]);
  }
}

if (root) {
  root.addEventListener("htmx:wsBeforeMessage", function (event) {
    const message = event.detail.message;
    if (typeof message !== "string" || !message.startsWith(RECORD)) {
      return;
    }
    event.preventDefault(); // not HTML: htmx would swap nothing
    // After every listener saw the message arrive (follow-scroll.js notes whether the page was at the bottom).
    queueMicrotask(function () {
      apply(message);
      htmx.trigger(event.target, "htmx:wsAfterMessage", event.detail);
    });
  });
}
