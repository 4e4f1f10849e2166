// A tool-call card's head comes alone when its status changes (webclient/web/live/card_updates.py sends it, not the
// whole card): the card takes the status the head carries (its data-status and status class), so the styles and
// the scripts and tests that read the card see it. No state kept.

const root = document.getElementById("session");

if (root) {
  root.addEventListener("htmx:oobAfterSwap", function (event) {
    const head = event.target;
    if (!(head instanceof HTMLElement) || !head.matches(".tool-call > .tool-head[data-status]")) {
      return;
    }
    const card = head.parentElement;
    card.dataset.status = head.dataset.status;
    for (const name of Array.from(card.classList)) {
      if (name.startsWith("status-")) {
        card.classList.remove(name);
      }
    }
    card.classList.add(head.dataset.statusClass);
  });
}
