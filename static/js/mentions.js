// "@" in the prompt box looks up the workspace's files: the box's hx-get (templates/session.html, fired by
// hx-trigger a moment after typing) asks the server, which renders the matching files into #mention-menu;
// this file says what to ask for (the word after "@" before the caret), shows the answer, and on a pick
// writes "@path" into the box and adds the file's chip. State kept here: the word last asked for, so an
// answer to an older question is not shown.

import { hideMenu, onPick, select, showMenu } from "./prompt-menus.js";

const MENTION_TYPED = /(^|\s)@([^\s@]*)$/;
const input = document.getElementById("prompt-input");
const menu = document.getElementById("mention-menu");
let asked = null;

// The word being typed after "@", or null when the caret is not in one.
function typedMention() {
  const match = MENTION_TYPED.exec(input.value.slice(0, input.selectionEnd));
  return match ? match[2] : null;
}

// The picked file's chip: it sends the file with the prompt (a resource link). Built here, with textContent only.
function addChip(path) {
  const list = document.getElementById("composer-attachments");
  if (!list || list.querySelector('input[name="mention"][value="' + CSS.escape(path) + '"]')) {
    return;
  }
  const label = "@" + path;
  const chip = document.createElement("span");
  chip.className = "chip mention";
  chip.dataset.role = "mention";
  const hidden = document.createElement("input");
  hidden.type = "hidden";
  hidden.name = "mention";
  hidden.value = path;
  const text = document.createElement("span");
  text.className = "chip-name";
  text.textContent = label;
  const remove = document.createElement("button");
  remove.type = "button";
  remove.className = "link chip-remove";
  remove.dataset.action = "remove-chip";
  remove.setAttribute("aria-label", "Remove " + label);
  remove.textContent = "×";
  chip.append(hidden, text, remove);
  list.append(chip);
}

function pickMention(li) {
  const before = input.value.slice(0, input.selectionEnd);
  const after = input.value.slice(input.selectionEnd);
  const path = li.dataset.path;
  const start = before.replace(MENTION_TYPED, "$1");
  input.value = start + "@" + path + " " + after.replace(/^\s+/, "");
  const caret = start.length + path.length + 2;
  input.setSelectionRange(caret, caret);
  addChip(path);
  asked = null;
  hideMenu(menu);
  input.focus();
}

if (input && menu) {
  onPick("mention-menu", pickMention);

  // No "@" word any more: the menu goes at once (the lookup waits for the typing to pause).
  input.addEventListener("input", function () {
    if (typedMention() === null) {
      asked = null;
      hideMenu(menu);
    }
  });

  // The lookup sends only the word after "@"; none, or the one already shown, and it is not sent.
  input.addEventListener("htmx:configRequest", function (event) {
    const query = typedMention();
    if (query === null || (query === asked && !menu.hidden)) {
      event.preventDefault();
      return;
    }
    asked = query;
    event.detail.parameters.q = query;
  });

  menu.addEventListener("htmx:afterSwap", function () {
    if (asked !== null && asked === typedMention()) {
      select(menu, null);
      showMenu(menu);
    }
  });
}
