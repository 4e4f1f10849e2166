// What the user opened or closed (a <details> with an id: a tool call, a diff, the plan) stays so when the
// server re-renders it (the same diff sent again, ...). State kept here: each such element's id and whether
// the user left it open.

const root = document.getElementById("session");
const userToggled = new Map();

if (root) {
  // "toggle" does not bubble: caught on the way down.
  root.addEventListener("toggle", function (event) {
    const details = event.target;
    if (details instanceof HTMLDetailsElement && details.id && event.isTrusted) {
      userToggled.set(details.id, details.open);
    }
  }, true);

  root.addEventListener("htmx:wsAfterMessage", function () {
    userToggled.forEach(function (open, id) {
      const details = document.getElementById(id);
      if (details instanceof HTMLDetailsElement && details.open !== open) {
        details.open = open;
      }
    });
  });
}

// The rename box closes once its title is sent: the header shows the new title.
if (root) {
  root.addEventListener("htmx:wsAfterSend", function (event) {
    const rename = event.target instanceof Element ? event.target.closest('details[data-role="rename"]') : null;
    if (rename) {
      rename.open = false;
    }
  });
}
