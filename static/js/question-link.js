// Opening the link of a URL question (ACP elicitation, URL mode) is the person's consent: the page answers
// `accept` as the link opens in a tab of its own (the question's hidden accept button, read by ws-send), and the
// entry then waits for the agent's `elicitation/complete`. A middle click opens it too. Keeps no state.

const thread = document.getElementById("thread");

function opened(event) {
  if (event.type === "auxclick" && event.button !== 1) {
    return;
  }
  const link = event.target instanceof Element ? event.target.closest('[data-role="question-link"]') : null;
  const accept = link ? link.closest("form")?.querySelector('[data-answer="accept"]') : null;
  if (accept && !accept.disabled) {
    accept.disabled = false;
    setTimeout(function () { accept.click(); }, 0); // the link opens first, as the person asked
  }
}

if (thread) {
  thread.addEventListener("click", opened);
  thread.addEventListener("auxclick", opened);
}
