// The list of the session's changes, when shown, stays current: when the server pushes a new count of
// changed files, the event "changes-updated" goes to the body, where the list (templates/_changes.html)
// listens for it and loads itself again. Keeps no state. A load asked for while one is on its way replaces it
// (hx-sync "this:replace"): queued behind it, it went with the element the first answer swapped out, and the
// panel stayed as it was before the last change (a Keep right after an Undo looked lost).

const link = document.querySelector("[data-action=show-changes]");

if (link) {
  // The count is swapped inside the link; the event bubbles from the new count.
  link.addEventListener("htmx:oobAfterSwap", function (event) {
    if (event.detail.target && event.detail.target.id === "changes-count") {
      htmx.trigger(document.body, "changes-updated");
    }
  });
}
