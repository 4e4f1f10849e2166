// Files pasted into the prompt box, dropped on it or picked with "+" become attachments. The file input
// carries the request (templates/session.html: hx-post, multipart, one file per request, queued): this file
// hands it the files one at a time, and the server holds each for the next prompt and answers with its chip
// (swapped into #composer-attachments) or says why not (shown in #composer-error). Which files go as images
// or audio, and whether the agent accepts them, is the server's to say (the composer's data-image-types and
// data-audio-types, the header's data-accepts), so a file the agent would refuse is not sent at all. State
// kept here: the files waiting for their turn to be sent; the chips are the attachments.

const composer = document.getElementById("composer");
const input = document.getElementById("prompt-input");
const picker = document.getElementById("attach-input");
const chips = document.getElementById("composer-attachments");

const NAMES = { image: "images", audio: "audio", embeddedContext: "attached files" };

function accepted() {
  const status = document.getElementById("session-status"); // replaced by the server: looked up each time
  return (status && status.dataset.accepts ? status.dataset.accepts : "").split(" ");
}

// Which media types go as images or audio (webclient/session/uploads.py): the form carries the server's lists.
function mediaTypes(name) {
  return (composer.dataset[name] || "").split(" ").filter(Boolean);
}

function needs(file) {
  const type = file.type.split(";")[0].trim().toLowerCase();
  if (mediaTypes("imageTypes").includes(type)) {
    return "image";
  }
  return mediaTypes("audioTypes").includes(type) ? "audio" : "embeddedContext";
}

function showError(text) {
  const error = document.getElementById("composer-error");
  if (error) {
    error.textContent = text;
    error.hidden = !text;
  }
}

const waiting = [];

function upload(file) {
  const capability = needs(file);
  if (!accepted().includes(capability)) {
    showError("This agent does not accept " + NAMES[capability] + " in prompts.");
    return;
  }
  waiting.push(file);
  htmx.trigger(picker, "upload"); // each trigger sends one waiting file (hx-sync queues them)
}

function uploadAll(files) {
  Array.from(files).forEach(upload);
}

if (composer && input && picker && chips) {
  input.addEventListener("paste", function (event) {
    if (!event.clipboardData || !event.clipboardData.files.length) {
      return;
    }
    if (event.clipboardData.types.includes("text/plain")) {
      return; // text with a picture of itself (office apps): the text is what was meant
    }
    event.preventDefault();
    uploadAll(event.clipboardData.files);
  });

  composer.addEventListener("dragover", function (event) {
    if (event.dataTransfer && event.dataTransfer.types.includes("Files")) {
      event.preventDefault();
      composer.classList.add("dragging");
    }
  });

  composer.addEventListener("dragleave", function (event) {
    if (!composer.contains(event.relatedTarget)) {
      composer.classList.remove("dragging");
    }
  });

  composer.addEventListener("drop", function (event) {
    if (event.dataTransfer && event.dataTransfer.files.length) {
      event.preventDefault();
      composer.classList.remove("dragging");
      uploadAll(event.dataTransfer.files);
    }
  });

  picker.addEventListener("change", function () {
    uploadAll(picker.files);
    picker.value = "";
  });

  // The request's only field is the next waiting file (hx-params="none" leaves out the prompt box's own).
  picker.addEventListener("htmx:configRequest", function (event) {
    const file = waiting.shift();
    if (!file) {
      event.preventDefault();
      return;
    }
    event.detail.parameters.file = file;
  });

  picker.addEventListener("htmx:afterRequest", function (event) {
    if (event.detail.successful) {
      showError("");
    }
  });

  picker.addEventListener("htmx:responseError", function (event) {
    showError(event.detail.xhr.responseText || "The file could not be attached.");
  });

  picker.addEventListener("htmx:sendError", function () {
    showError("The file could not be sent to the server.");
  });

  // Chips of uploads (from the server) and of "@" files (mentions.js): the × removes one.
  chips.addEventListener("click", function (event) {
    const remove = event.target instanceof Element ? event.target.closest("[data-action=remove-chip]") : null;
    if (remove) {
      remove.closest(".chip").remove();
    }
  });

  // Sent with the prompt: the chips go, and any complaint about a file with them.
  composer.addEventListener("htmx:wsConfigSend", function (event) {
    if (event.target === composer) {
      chips.querySelectorAll(".chip").forEach(function (chip) { chip.remove(); });
      showError("");
    }
  });
}
