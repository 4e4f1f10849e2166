// In the prompt box Enter sends (when there is text or an attachment) and Shift+Enter makes a new line.
// Keeps no state. (While a menu is open, prompt-menus.js takes Enter first.)

const composer = document.getElementById("composer");
const input = document.getElementById("prompt-input");

if (composer && input) {
  input.addEventListener("keydown", function (event) {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      if (input.value.trim() || composer.querySelector("#composer-attachments .chip")) {
        composer.requestSubmit();
      }
    }
  });
}
