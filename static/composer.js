// The prompt box: "/" opens the agent's commands, "@" the workspace's files, pasted or dropped files
// become attachments. The server renders every list and chip; this file only shows, filters and picks.
(function () {
  "use strict";

  function prompt() {
    return document.getElementById("prompt-input");
  }

  function sessionUrl(path) {
    const form = document.getElementById("composer");
    return form ? form.getAttribute("action").replace(/\/prompt$/, path) : null;
  }

  // -- Menus (listboxes under the prompt box) -----------------------------------------------------

  function options(menu) {
    return Array.from(menu.querySelectorAll("li[role=option]")).filter(function (li) { return !li.hidden; });
  }

  function selected(menu) {
    return menu.querySelector("li[role=option][aria-selected=true]:not([hidden])");
  }

  function select(menu, li) {
    menu.querySelectorAll("li[aria-selected]").forEach(function (other) { other.removeAttribute("aria-selected"); });
    if (li) {
      li.setAttribute("aria-selected", "true");
      li.scrollIntoView({ block: "nearest" });
      const input = prompt();
      if (input) {
        input.setAttribute("aria-activedescendant", li.id);
      }
    }
  }

  function openMenu() {
    return document.querySelector(".menus .menu:not([hidden])");
  }

  function showMenu(menu) {
    const input = prompt();
    const items = options(menu);
    if (!items.length) {
      hideMenu(menu);
      return;
    }
    menu.hidden = false;
    if (!selected(menu)) {
      select(menu, items[0]);
    }
    if (input) {
      input.setAttribute("aria-expanded", "true");
      input.setAttribute("aria-controls", menu.id);
    }
  }

  function hideMenu(menu) {
    const wasOpen = !menu.hidden;
    menu.hidden = true;
    const input = prompt();
    if (input && wasOpen) {
      input.setAttribute("aria-expanded", "false");
      input.removeAttribute("aria-activedescendant");
    }
  }

  function move(menu, delta) {
    const items = options(menu);
    const index = items.indexOf(selected(menu));
    select(menu, items[(index + delta + items.length) % items.length]);
  }

  // -- "/" commands --------------------------------------------------------------------------------

  const COMMAND_TYPED = /^\/(\S*)$/;

  function filterCommands() {
    const menu = document.getElementById("command-menu");
    const input = prompt();
    if (!menu || !input) {
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

  function pickCommand(li) {
    const input = prompt();
    input.value = "/" + li.dataset.command + " ";
    input.setSelectionRange(input.value.length, input.value.length);
    showHint(li.dataset.hint ? "/" + li.dataset.command + " " + li.dataset.hint : "");
    hideMenu(li.parentElement);
    input.focus();
  }

  // -- "@" files -----------------------------------------------------------------------------------

  const MENTION_TYPED = /(^|\s)@([^\s@]*)$/;
  let mentionTimer = null;
  let mentionQuery = null;

  function filterMentions() {
    const menu = document.getElementById("mention-menu");
    const input = prompt();
    if (!menu || !input) {
      return;
    }
    const match = MENTION_TYPED.exec(input.value.slice(0, input.selectionEnd));
    if (!match) {
      mentionQuery = null;
      hideMenu(menu);
      return;
    }
    const query = match[2];
    if (query === mentionQuery && !menu.hidden) {
      return;
    }
    mentionQuery = query;
    clearTimeout(mentionTimer);
    mentionTimer = setTimeout(function () {
      htmx.ajax("GET", sessionUrl("/mentions") + "?q=" + encodeURIComponent(query), {
        target: "#mention-menu", swap: "innerHTML",
      }).then(function () {
        if (mentionQuery === query) {
          select(menu, null);
          showMenu(menu);
        }
      });
    }, 120);
  }

  function addChip(kind, name, value, label) {
    const list = document.getElementById("composer-attachments");
    if (!list || list.querySelector('input[name="' + name + '"][value="' + CSS.escape(value) + '"]')) {
      return;
    }
    const chip = document.createElement("span");
    chip.className = "chip " + kind;
    chip.dataset.role = kind;
    const hidden = document.createElement("input");
    hidden.type = "hidden";
    hidden.name = name;
    hidden.value = value;
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
    const input = prompt();
    const before = input.value.slice(0, input.selectionEnd);
    const after = input.value.slice(input.selectionEnd);
    const path = li.dataset.path;
    const start = before.replace(MENTION_TYPED, "$1");
    input.value = start + "@" + path + " " + after.replace(/^\s+/, "");
    const caret = start.length + path.length + 2;
    input.setSelectionRange(caret, caret);
    addChip("mention", "mention", path, "@" + path);
    mentionQuery = null;
    hideMenu(li.parentElement);
    input.focus();
  }

  function pick(menu, li) {
    if (menu.id === "command-menu") {
      pickCommand(li);
    } else {
      pickMention(li);
    }
  }

  document.addEventListener("input", function (event) {
    if (event.target === prompt()) {
      if (!event.target.value.startsWith("/")) {
        showHint("");
      }
      filterCommands();
      filterMentions();
    }
  });

  // Keys on the prompt box while a menu is open; runs before app.js's Enter-to-send and Escape-to-stop.
  document.addEventListener("keydown", function (event) {
    const menu = openMenu();
    if (!menu || event.target !== prompt() || event.isComposing) {
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

  document.addEventListener("mousedown", function (event) {
    const li = event.target instanceof Element ? event.target.closest(".menus li[role=option]") : null;
    if (li) {
      event.preventDefault(); // keep the focus in the prompt box
      pick(li.parentElement, li);
    }
  });

  document.addEventListener("focusout", function (event) {
    if (event.target === prompt()) {
      setTimeout(function () {
        if (document.activeElement !== prompt()) {
          document.querySelectorAll(".menus .menu").forEach(hideMenu);
        }
      }, 150);
    }
  });

  // A new list of commands from the agent: filter it as the user's text says.
  document.addEventListener("htmx:oobAfterSwap", function (event) {
    if (event.detail.target && event.detail.target.id === "command-menu" && document.activeElement === prompt()) {
      filterCommands();
    }
  });

  // -- Sending ---------------------------------------------------------------------------------------

  // The prompt box empties itself the moment its values are taken for sending, with a new nonce for the
  // next prompt: what the user types next is never lost to a form coming back from the server, and two
  // quick prompts never share a nonce (the server drops a repeated one as a replay).
  document.addEventListener("htmx:wsConfigSend", function (event) {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || form.id !== "composer") {
      return;
    }
    const nonce = form.querySelector("#prompt-nonce");
    if (nonce) {
      nonce.value = crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2) + Date.now();
    }
    prompt().value = "";
    form.querySelectorAll("#composer-attachments .chip").forEach(function (chip) { chip.remove(); });
    showHint("");
    showError("");
    document.querySelectorAll(".menus .menu").forEach(hideMenu);
  });

  // -- Attachments ---------------------------------------------------------------------------------

  const NAMES = { image: "images", audio: "audio", embeddedContext: "attached files" };

  function accepted() {
    const status = document.getElementById("session-status");
    return (status && status.dataset.accepts ? status.dataset.accepts : "").split(" ");
  }

  // Which media types go as images or audio is the server's to say (webclient/session/uploads.py): the form carries its
  // lists, so the check here and the server's agree.
  function mediaTypes(name) {
    const form = document.getElementById("composer");
    return (form && form.dataset[name] ? form.dataset[name] : "").split(" ").filter(Boolean);
  }

  function needs(file) {
    const type = file.type.split(";")[0].trim().toLowerCase();
    if (mediaTypes("imageTypes").includes(type)) {
      return "image";
    }
    return mediaTypes("audioTypes").includes(type) ? "audio" : "embeddedContext";
  }

  function showError(text) {
    const error = document.getElementById("composer-error");
    if (error) {
      error.textContent = text;
      error.hidden = !text;
    }
  }

  function csrfToken() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.content : "";
  }

  function upload(file) {
    const capability = needs(file);
    if (!accepted().includes(capability)) {
      showError("This agent does not accept " + NAMES[capability] + " in prompts.");
      return;
    }
    fetch(sessionUrl("/attachments"), {
      method: "POST",
      body: file,
      headers: {
        "X-Filename": encodeURIComponent(file.name || "pasted"),
        "Content-Type": file.type || "application/octet-stream",
        "X-CSRF-Token": csrfToken(), // for browsers that send no Origin (webclient/web/access.py)
      },
    }).then(function (response) {
      return response.text().then(function (text) {
        if (!response.ok) {
          showError(text || "The file could not be attached.");
          return;
        }
        showError("");
        const list = document.getElementById("composer-attachments");
        if (list) {
          list.insertAdjacentHTML("beforeend", text); // rendered and escaped by the server
        }
      });
    }).catch(function () {
      showError("The file could not be sent to the server.");
    });
  }

  function uploadAll(files) {
    Array.from(files).forEach(upload);
  }

  document.addEventListener("paste", function (event) {
    if (event.target !== prompt() || !event.clipboardData || !event.clipboardData.files.length) {
      return;
    }
    if (event.clipboardData.types.includes("text/plain")) {
      return; // text with a picture of itself (office apps): the text is what was meant
    }
    event.preventDefault();
    uploadAll(event.clipboardData.files);
  });

  function composerOf(event) {
    return event.target instanceof Element ? event.target.closest("#composer") : null;
  }

  document.addEventListener("dragover", function (event) {
    const composer = composerOf(event);
    if (composer && event.dataTransfer && event.dataTransfer.types.includes("Files")) {
      event.preventDefault();
      composer.classList.add("dragging");
    }
  });

  document.addEventListener("dragleave", function (event) {
    const composer = composerOf(event);
    if (composer && !composer.contains(event.relatedTarget)) {
      composer.classList.remove("dragging");
    }
  });

  document.addEventListener("drop", function (event) {
    const composer = composerOf(event);
    if (composer && event.dataTransfer && event.dataTransfer.files.length) {
      event.preventDefault();
      composer.classList.remove("dragging");
      uploadAll(event.dataTransfer.files);
    }
  });

  document.addEventListener("change", function (event) {
    if (event.target instanceof HTMLInputElement && event.target.id === "attach-input") {
      uploadAll(event.target.files);
      event.target.value = "";
    }
  });

  document.addEventListener("click", function (event) {
    const remove = event.target instanceof Element ? event.target.closest("[data-action=remove-chip]") : null;
    if (remove) {
      remove.closest(".chip").remove();
    }
  });
})();
