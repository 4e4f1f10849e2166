// A "Copy" button on every code block of the agent's Markdown (absolutely placed: nothing moves). Keeps no
// state: a block that has its button is marked with the class has-copy.

const root = document.getElementById("session");

function copy(button) {
  const code = button.parentElement.querySelector("code") || button.parentElement;
  const done = function (label) {
    button.dataset.label = label;
    setTimeout(function () { button.dataset.label = "Copy"; }, 1500);
  };
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(code.innerText).then(function () { done("Copied"); }, function () { done("Copy failed"); });
  } else {
    const range = document.createRange(); // no clipboard API over plain http: select it for Ctrl+C
    range.selectNodeContents(code);
    window.getSelection().removeAllRanges();
    window.getSelection().addRange(range);
    done("Press Ctrl+C");
  }
}

function addCopyButtons() {
  document.querySelectorAll(".md pre:not(.has-copy)").forEach(function (pre) {
    pre.classList.add("has-copy");
    const button = document.createElement("button");
    button.type = "button";
    button.className = "copy-code";
    button.dataset.action = "copy-code";
    button.dataset.label = "Copy"; // shown by CSS, so the label never becomes part of the message's text
    button.setAttribute("aria-label", "Copy code");
    button.addEventListener("click", function () { copy(button); });
    pre.append(button);
  });
}

addCopyButtons();
if (root) {
  root.addEventListener("htmx:wsAfterMessage", addCopyButtons);
}
