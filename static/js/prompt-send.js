// The prompt box empties itself the moment its values are taken for sending (ws-send), with a new nonce for
// the next prompt: what the user types next is never lost to a form coming back from the server, and two
// quick prompts never share a nonce (the server drops a repeated one as a replay). Its chips, hint, error and
// menus are cleared by the files that own them. A prompt longer than the server takes (the composer's
// data-max-prompt-bytes, WEBCLIENT_MAX_PROMPT_MB) is not sent at all: it stays in the box, with the server's
// reason in #composer-error, rather than close the socket (a message past its size) or vanish. Keeps no state.

const composer = document.getElementById("composer");

function tooLong(text) {
  const most = Number(composer.dataset.maxPromptBytes || 0);
  const size = new TextEncoder().encode(text).length;
  if (!most || size <= most) {
    return "";
  }
  return `The prompt is ${size.toLocaleString("en")} bytes long, more than this server takes ` +
    `(${most.toLocaleString("en")} bytes, WEBCLIENT_MAX_PROMPT_MB): shorten it, or attach the text as a file.`;
}

if (composer) {
  composer.addEventListener("htmx:wsConfigSend", function (event) {
    if (event.target !== composer) {
      return;
    }
    const input = composer.querySelector("#prompt-input");
    const refusal = tooLong(input.value);
    if (refusal) {
      event.preventDefault(); // not sent
      event.stopImmediatePropagation(); // and the chips stay (static/js/attachments.js)
      const error = document.getElementById("composer-error");
      error.textContent = refusal;
      error.hidden = false;
      return;
    }
    const nonce = composer.querySelector("#prompt-nonce"); // replaced by the server now and then: looked up each time
    if (nonce) {
      nonce.value = crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2) + Date.now();
    }
    input.value = "";
  });
}
