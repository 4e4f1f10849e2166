// "Show earlier" puts older entries above the page's first one: keep that entry (what the user reads) where
// it was. Scroll anchoring would, but Chromium does not anchor at the very top, where the sentinel fires.
// State kept here: the entry that was first and its place on screen, from before the message to after it.

const root = document.getElementById("session");
let threadTop = null;

// A link to an entry (#entry-N) the page does not hold opens the page on the window around it (?at=N): the page
// holds only the newest entries.
const linked = /^#entry-(\d+)$/.exec(window.location.hash);
if (root && linked && !document.getElementById(linked[0].slice(1))) {
  const url = new URL(window.location.href);
  if (url.searchParams.get("at") !== linked[1]) {
    url.searchParams.set("at", linked[1]);
    window.location.replace(url.href);
  }
}

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
