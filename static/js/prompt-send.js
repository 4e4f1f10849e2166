// The prompt box empties itself the moment its values are taken for sending (ws-send), with a new nonce for
// the next prompt: what the user types next is never lost to a form coming back from the server, and two
// quick prompts never share a nonce (the server drops a repeated one as a replay). Its chips, hint, error and
// menus are cleared by the files that own them. Keeps no state.

const composer = document.getElementById("composer");

if (composer) {
  composer.addEventListener("htmx:wsConfigSend", function (event) {
    if (event.target !== composer) {
      return;
    }
    const nonce = composer.querySelector("#prompt-nonce"); // replaced by the server now and then: looked up each time
    if (nonce) {
      nonce.value = crypto.randomUUID ? crypto.randomUUID() : String(Math.random()).slice(2) + Date.now();
    }
    composer.querySelector("#prompt-input").value = "";
  });
}
