// The sticky top bar and the dock cover the top and the bottom of the window: their heights go to CSS
// (--topbar-height, --dock-height, used by scroll-padding) so nothing is scrolled into view beneath them.
// A constructed stylesheet, not a style attribute: the page's CSP allows none. State kept here: that
// stylesheet, rewritten whenever either bar changes size.

const topbar = document.querySelector(".topbar");
const dock = document.querySelector(".dock");

if (topbar && dock && "adoptedStyleSheets" in document) {
  const sheet = new CSSStyleSheet();
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
  const observer = new ResizeObserver(function () {
    // A top bar that scrolls away (while the sign-in step shows: static/app.css) covers only its sticky line (what
    // the sign-in is doing, Retry, Cancel).
    const lede = topbar.querySelector(".auth-lede");
    const sticky = getComputedStyle(topbar).position === "sticky";
    const covering = sticky ? topbar.offsetHeight : lede ? lede.offsetHeight : 0;
    sheet.replaceSync(":root { --topbar-height: " + covering + "px; --dock-height: " + dock.offsetHeight + "px; }");
  });
  observer.observe(topbar);
  observer.observe(dock);
}
