// Elapsed time while the agent starts or signs in. The server renders [data-elapsed] as "m:ss" when it
// renders the header; this counts on from there, by the browser's own clock from when it saw that element
// (so clocks need not agree). Looked at four times a second, so a fresh header starts counting at once;
// cheaper than the server re-rendering the header every second for every open tab. State kept here: when
// each clock was first seen, counted back to its zero.

const elapsedSeen = new WeakMap();

function tickElapsed() {
  const now = Date.now();
  document.querySelectorAll("[data-elapsed]").forEach(function (element) {
    if (!elapsedSeen.has(element)) {
      const [minutes, seconds] = element.dataset.elapsed.split(":").map(Number);
      elapsedSeen.set(element, now - ((minutes || 0) * 60 + (seconds || 0)) * 1000);
    }
    const total = Math.floor((now - elapsedSeen.get(element)) / 1000);
    const text = Math.floor(total / 60) + ":" + String(total % 60).padStart(2, "0");
    if (element.textContent !== text) {
      element.textContent = text;
    }
  });
}

setInterval(tickElapsed, 250);
