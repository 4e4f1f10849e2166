// The menus under the prompt box ("/" commands, "@" files) are listboxes the prompt box controls as a
// combobox: the arrows move the selection, Enter or Tab picks, Escape closes, a click picks, leaving the box
// or sending closes them. commands.js and mentions.js fill them and say what a pick does (onPick). State
// kept here: what each menu's pick does; which menu is open and which item is selected live in the DOM
// (hidden, aria-selected), the prompt box's aria-expanded and aria-activedescendant follow them.

const composer = document.getElementById("composer");
const input = document.getElementById("prompt-input");
const menus = document.querySelector(".menus");
const pickers = new Map();

// What picking an item of the menu with this id does.
export function onPick(menuId, pick) {
  pickers.set(menuId, pick);
}

export function options(menu) {
  return Array.from(menu.querySelectorAll("li[role=option]")).filter(function (li) { return !li.hidden; });
}

function selected(menu) {
  return menu.querySelector("li[role=option][aria-selected=true]:not([hidden])");
}

export function select(menu, li) {
  menu.querySelectorAll("li[aria-selected]").forEach(function (other) { other.removeAttribute("aria-selected"); });
  if (li) {
    li.setAttribute("aria-selected", "true");
    li.scrollIntoView({ block: "nearest" });
    input.setAttribute("aria-activedescendant", li.id);
  }
}

export function showMenu(menu) {
  const items = options(menu);
  if (!items.length) {
    hideMenu(menu);
    return;
  }
  menu.hidden = false;
  if (!selected(menu)) {
    select(menu, items[0]);
  }
  input.setAttribute("aria-expanded", "true");
  input.setAttribute("aria-controls", menu.id);
}

export function hideMenu(menu) {
  const wasOpen = !menu.hidden;
  menu.hidden = true;
  if (wasOpen) {
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
  }
}

function hideAll() {
  menus.querySelectorAll(".menu").forEach(hideMenu);
}

function move(menu, delta) {
  const items = options(menu);
  const index = items.indexOf(selected(menu));
  select(menu, items[(index + delta + items.length) % items.length]);
}

function pick(menu, li) {
  const picked = pickers.get(menu.id);
  if (picked) {
    picked(li);
  }
}

if (composer && input && menus) {
  // On the way down to the prompt box, so these keys never reach Enter-to-send (composer-keys.js) or
  // Escape-to-stop (session-keys.js) while a menu is open.
  composer.addEventListener("keydown", function (event) {
    const menu = menus.querySelector(".menu:not([hidden])");
    if (!menu || event.target !== input || event.isComposing) {
      return;
    }
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      move(menu, event.key === "ArrowDown" ? 1 : -1);
    } else if ((event.key === "Enter" && !event.shiftKey) || event.key === "Tab") {
      const li = selected(menu);
      if (!li) {
        return;
      }
      pick(menu, li);
    } else if (event.key === "Escape") {
      hideMenu(menu);
    } else {
      return;
    }
    event.preventDefault();
    event.stopImmediatePropagation();
  }, true);

  menus.addEventListener("mousedown", function (event) {
    const li = event.target instanceof Element ? event.target.closest("li[role=option]") : null;
    if (li) {
      event.preventDefault(); // keep the focus in the prompt box
      pick(li.parentElement, li);
    }
  });

  input.addEventListener("focusout", function () {
    setTimeout(function () {
      if (document.activeElement !== input) {
        hideAll();
      }
    }, 150);
  });

  composer.addEventListener("htmx:wsConfigSend", function (event) {
    if (event.target === composer) {
      hideAll();
    }
  });
}
