// The list of the session's changes, when shown, stays current: when the server pushes a new count of
// changed files, the event "changes-updated" goes to the body, where the list (templates/_changes.html) or the
// file's review (templates/_change_panel.html) listens for it and loads itself again. A load asked for while one
// is on its way replaces it (hx-sync "this:replace"): queued behind it, it went with the element the first answer
// swapped out, and the panel stayed as it was before the last change (a Keep right after an Undo looked lost).
// A count that comes while a panel is loading is not lost either: the panel swapped in listens only once htmx
// settles it, a moment later, so a panel that was asked for before the last count loads itself once more then.

const link = document.querySelector("[data-action=show-changes]");
const listening = '[data-role="changes"], [data-role="change-diff"]';
let counts = 0; // counts pushed since the page loaded
const countsWhenAsked = new WeakMap(); // a request (its XMLHttpRequest) → counts when it was sent

if (link) {
  // The count is swapped inside the link; the event bubbles from the new count.
  link.addEventListener("htmx:oobAfterSwap", function (event) {
    if (event.detail.target && event.detail.target.id === "changes-count") {
      counts += 1;
      htmx.trigger(document.body, "changes-updated");
    }
  });
  document.body.addEventListener("htmx:beforeRequest", function (event) {
    countsWhenAsked.set(event.detail.xhr, counts);
  });
  document.body.addEventListener("htmx:afterSettle", function (event) {
    const asked = countsWhenAsked.get(event.detail.xhr);
    const settled = event.target instanceof Element ? event.target : null;
    if (asked === undefined || asked === counts || !settled || !(settled.matches(listening) || settled.querySelector(listening))) {
      return;
    }
    countsWhenAsked.delete(event.detail.xhr);
    htmx.trigger(document.body, "changes-updated");
  });
}
