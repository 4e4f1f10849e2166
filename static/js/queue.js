// A queued prompt is edited in place: Enter (without Shift) ends the edit, which its form sends on change.
// Keeps no state.

const dock = document.querySelector(".dock");

// The queue (#prompt-queue) is replaced whenever it changes; the dock around it is not.
if (dock) {
  dock.addEventListener("keydown", function (event) {
    const target = event.target;
    if (target instanceof HTMLTextAreaElement && target.closest(".queued-form")) {
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        target.blur(); // the change is sent on blur
      }
    }
  });
}
