// One click answers a permission question: the other buttons of the group go quiet until the server
// re-renders the card. Keeps no state.

const thread = document.getElementById("thread");

if (thread) {
  thread.addEventListener("click", function (event) {
    const button = event.target instanceof Element ? event.target.closest("[data-option-id]") : null;
    if (!button) {
      return;
    }
    setTimeout(function () { // after ws-send has read the button
      const group = button.closest(".options");
      if (group) {
        group.querySelectorAll("button").forEach(function (b) { b.disabled = true; });
      }
    }, 0);
  });
}
