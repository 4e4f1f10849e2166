// "/" at the start of the prompt box opens the agent's commands (rendered by the server into #command-menu,
// pushed again when the agent sends a new list), filtered by what follows the slash; picking one writes it
// into the box and shows its argument hint underneath. Keeps no state: the hint is in #command-hint.

import { hideMenu, onPick, options, select, showMenu } from "./prompt-menus.js";

const COMMAND_TYPED = /^\/(\S*)$/;
const composer = document.getElementById("composer");
const input = document.getElementById("prompt-input");
const menus = document.querySelector(".menus");

function filterCommands() {
  const menu = document.getElementById("command-menu");
  if (!menu) {
    return;
  }
  const match = COMMAND_TYPED.exec(input.value.slice(0, input.selectionEnd));
  if (!match || input.value.slice(input.selectionEnd).trim()) {
    hideMenu(menu);
    return;
  }
  const typed = match[1].toLowerCase();
  menu.querySelectorAll("li[role=option]").forEach(function (li) {
    li.hidden = !li.dataset.command.toLowerCase().includes(typed);
  });
  const first = options(menu).find(function (li) { return li.dataset.command.toLowerCase().startsWith(typed); });
  select(menu, first || options(menu)[0]);
  showMenu(menu);
}

function showHint(text) {
  const hint = document.getElementById("command-hint");
  if (hint) {
    hint.textContent = text;
    hint.hidden = !text;
  }
}

// The prompt box's placeholder promises "/ for commands" only while the agent has some (an agent that never sends
// any, a remote one, would otherwise offer an empty menu).
function promiseCommands() {
  const menu = document.getElementById("command-menu");
  const some = menu && Number(menu.dataset.count) > 0;
  input.placeholder = "Message the agent — " + (some ? "/ for commands, " : "") + "@ for files";
}

function pickCommand(li) {
  input.value = "/" + li.dataset.command + " ";
  input.setSelectionRange(input.value.length, input.value.length);
  showHint(li.dataset.hint ? "/" + li.dataset.command + " " + li.dataset.hint : "");
  hideMenu(li.parentElement);
  input.focus();
}

if (composer && input && menus) {
  onPick("command-menu", pickCommand);

  input.addEventListener("input", function () {
    if (!input.value.startsWith("/")) {
      showHint("");
    }
    filterCommands();
  });

  // A new list of commands from the agent (swapped inside .menus): filter it as the user's text says.
  menus.addEventListener("htmx:oobAfterSwap", function (event) {
    if (event.detail.target && event.detail.target.id === "command-menu") {
      promiseCommands();
      if (document.activeElement === input) {
        filterCommands();
      }
    }
  });

  composer.addEventListener("htmx:wsConfigSend", function (event) {
    if (event.target === composer) {
      showHint("");
    }
  });
}
