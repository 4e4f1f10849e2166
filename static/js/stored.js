// What a page remembers in localStorage, where the browser allows it. A page in another site's frame (embedded in a
// portal, docs/embedding.md) may be refused its storage (third-party storage blocked): reading it then throws, so
// every behaviour file asks here instead, and the choice is only not remembered. Keeps no state of its own.

export function recall(key) {
  try {
    return window.localStorage.getItem(key);
  } catch {
    return null;
  }
}

export function keep(key, value) {
  try {
    window.localStorage.setItem(key, value);
  } catch {
    // Not remembered: the page works on without it.
  }
}
