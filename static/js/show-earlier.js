// "Show earlier" puts older entries above the page's first one: keep that entry (what the user reads) where
// it was. Scroll anchoring would, but Chromium does not anchor at the very top, where the sentinel fires.
// State kept here: the entry that was first and its place on screen, from before the message to after it.

const root = document.getElementById("session");
let threadTop = null;

if (root) {
  root.addEventListener("htmx:wsBeforeMessage", function (event) {
    const message = event.detail.message;
    const first = typeof message === "string" && message.includes("afterend:#thread-start")
      ? document.querySelector("#thread-start + *") : null;
    threadTop = first ? { element: first, top: first.getBoundingClientRect().top } : null;
  });

  root.addEventListener("htmx:wsAfterMessage", function () {
    if (threadTop && threadTop.element.isConnected) {
      window.scrollBy(0, threadTop.element.getBoundingClientRect().top - threadTop.top);
    }
    threadTop = null;
  });
}
