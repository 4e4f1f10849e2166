// The page follows the agent's output while the user is at the bottom, and stays put while they read above
// it; "Jump to latest" is shown while they are above and takes them down. State kept here: whether the page
// was at the bottom when the last message from the server arrived.

const root = document.getElementById("session");
const jump = document.querySelector("[data-action=jump-to-latest]");

let stickToBottom = true;

function nearBottom() {
  const doc = document.scrollingElement || document.documentElement;
  return doc.scrollHeight - doc.scrollTop - doc.clientHeight < 80;
}

function scrollToBottom() {
  const doc = document.scrollingElement || document.documentElement;
  doc.scrollTop = doc.scrollHeight;
}

function updateJump() {
  if (jump) {
    jump.hidden = nearBottom();
  }
}

if (root && !document.querySelector(":target")) {
  scrollToBottom(); // a session opens at its newest entries (or at the entry its link names); other pages at their top
}
window.addEventListener("scroll", updateJump, { passive: true });

if (jump) {
  jump.addEventListener("click", function () {
    scrollToBottom();
    updateJump();
  });
}

if (root) {
  root.addEventListener("htmx:wsBeforeMessage", function () {
    stickToBottom = nearBottom();
  });
  // After the other behaviours put back what the message moved (show-earlier.js): loaded after them.
  root.addEventListener("htmx:wsAfterMessage", function () {
    if (stickToBottom) {
      scrollToBottom();
    }
    updateJump();
  });
}
