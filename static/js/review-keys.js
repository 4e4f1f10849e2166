// Keys for reviewing a changed file in the side panel (templates/_change_panel.html): "]" goes to the next change
// (hunk), "[" to the previous one, "k" keeps the current one, "u" undoes it; as Zed's review does, and never while
// typing. The current hunk is the one marked data-current (static/diff.css shows it), else the first; a click or
// a tap on a hunk makes it current. Keeps no state but in the DOM: the panel is swapped whole after each action,
// and its first hunk is then current.

const panelBody = document.getElementById("side-panel-body");

function typing(element) {
  return element instanceof HTMLElement && (element.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(element.tagName));
}

function hunks() {
  return panelBody ? Array.from(panelBody.querySelectorAll('[data-role="review-hunk"]')) : [];
}

function current(all) {
  return all.find(function (hunk) { return hunk.hasAttribute("data-current"); }) || all[0];
}

function select(hunk) {
  hunks().forEach(function (other) { other.toggleAttribute("data-current", other === hunk); });
  if (hunk) {
    hunk.focus({ preventScroll: true });
    hunk.scrollIntoView({ block: "nearest" });
  }
}

if (panelBody) {
  panelBody.addEventListener("click", function (event) {
    const hunk = event.target instanceof Element ? event.target.closest('[data-role="review-hunk"]') : null;
    if (hunk) {
      hunks().forEach(function (other) { other.toggleAttribute("data-current", other === hunk); });
    }
  });
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) {
      return;
    }
    const all = hunks();
    if (!all.length || !["]", "[", "k", "u"].includes(event.key)) {
      return;
    }
    event.preventDefault();
    const here = current(all);
    if (event.key === "]" || event.key === "[") {
      const index = all.indexOf(here) + (event.key === "]" ? 1 : -1);
      select(all[Math.max(0, Math.min(all.length - 1, index))]);
      return;
    }
    const button = here.querySelector(event.key === "k" ? '[data-action="review-keep"]' : '[data-action="review-undo"]');
    if (button) {
      htmx.process(button); // a panel swapped in a moment ago may not be wired to the socket yet (htmx settles it)
      button.click();
    }
  });
}
