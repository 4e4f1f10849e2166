// The page's keyboard shortcuts: Escape stops the agent's turn; 1-9 (Alt+1-9 while typing) answer the first
// open permission question. Page-wide, so they listen on the document. Keeps no state but in the DOM: the
// card the keys answer is marked data-keys (and the session data-several-waiting when others wait), so that
// only it shows its keys (static/app.css). (The prompt box's own keys are in composer-keys.js and
// prompt-menus.js, which run first.)

const root = document.getElementById("session");
const thread = document.getElementById("thread");

function markKeyed() {
  const waiting = root.querySelectorAll(".tool-call.waiting");
  waiting.forEach(function (card, index) { card.toggleAttribute("data-keys", index === 0); });
  root.toggleAttribute("data-several-waiting", waiting.length > 1);
}

if (root && thread) {
  markKeyed();
  // Cards come and go as whole elements (outerHTML swaps): a change of the thread's children is enough.
  new MutationObserver(markKeyed).observe(thread, { childList: true, subtree: true });
}

function editable(element) {
  return element instanceof HTMLElement && (element.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(element.tagName));
}

if (root) {
  document.addEventListener("keydown", function (event) {
    const digit = /^(?:Digit|Numpad)([1-9])$/.exec(event.code);
    if (digit && !event.ctrlKey && !event.metaKey && (event.altKey || !editable(event.target))) {
      const option = root.querySelector('.tool-call.waiting[data-keys] .options button[data-key="' + digit[1] + '"]:not(:disabled)');
      if (option) {
        event.preventDefault();
        option.click();
      }
    }
    if (event.key === "Escape") {
      const stop = root.querySelector('[data-action="cancel"]');
      if (stop && root.dataset.turnState !== "idle" && root.dataset.turnState !== "ended") {
        stop.click();
      }
    }
  });
}
