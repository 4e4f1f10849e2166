// A checkpoint's Restore and Edit-and-resend (templates/_checkpoint_preview.html) are disabled while the agent works,
// with the reason as their title: the preview shows the state of when it was opened, and a turn may start after. The
// server refuses them during a turn too. Each time a checkpoint opens it asks for its preview afresh ("checkpoint-open",
// its hx-trigger: htmx's trigger filters need eval, which the page's policy forbids); once Restore or Edit and resend
// is sent, it closes, and shows the files as they are then when opened again. Keeps no state: the page root's
// data-turn-state is the state.

const root = document.getElementById("session");
const BUSY = new Set(["running", "awaiting-permission"]);

function reflectTurn() {
  const busy = BUSY.has(root.dataset.turnState);
  for (const preview of root.querySelectorAll('[data-role="checkpoint-preview"]')) {
    const reason = preview.dataset.busy;
    for (const button of preview.querySelectorAll('[data-role="checkpoint-restore"], [data-role="checkpoint-resend-button"]')) {
      if (busy && !button.disabled) {
        button.disabled = true;
        button.title = reason;
      } else if (!busy && button.disabled && button.title === reason) {
        button.disabled = false;
        button.removeAttribute("title");
      }
    }
  }
}

function closeOnceSent(event) {
  const checkpoint = event.target instanceof Element ? event.target.closest('details[data-role="checkpoint"]') : null;
  if (checkpoint) {
    checkpoint.open = false;
    const body = checkpoint.querySelector(".checkpoint-body");
    const waiting = document.createElement("p");
    waiting.className = "muted";
    waiting.textContent = "Comparing the files with the checkpoint…";
    body.replaceChildren(waiting); // never the preview of before the restore, while the next is on its way
  }
}

function askWhenOpened(event) {
  const details = event.target;
  if (details instanceof HTMLDetailsElement && details.dataset.role === "checkpoint" && details.open) {
    details.dispatchEvent(new CustomEvent("checkpoint-open"));
  }
}

if (root) {
  root.addEventListener("toggle", askWhenOpened, true); // "toggle" does not bubble: caught on the way down
  root.addEventListener("turn-state-change", reflectTurn);
  root.addEventListener("htmx:afterSettle", reflectTurn);
  root.addEventListener("htmx:wsAfterSend", closeOnceSent);
}
