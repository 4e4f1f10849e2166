// Files pasted into the prompt box, dropped on it or picked with "+" become attachments: each is sent to
// the server (the URL is the file input's data-url), which holds it for the next prompt and answers with its
// chip; a chip's × removes it. Which files go as images or audio, and whether the agent accepts them, is the
// server's to say (the composer's data-image-types and data-audio-types, the header's data-accepts), so a
// file the agent would refuse is not sent at all. Keeps no state: the chips are the attachments.

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

function csrfToken() {
  const meta = document.querySelector('meta[name="csrf-token"]');
  return meta ? meta.content : "";
}

function upload(file) {
  const capability = needs(file);
  if (!accepted().includes(capability)) {
    showError("This agent does not accept " + NAMES[capability] + " in prompts.");
    return;
  }
  fetch(picker.dataset.url, {
    method: "POST",
    body: file,
    headers: {
      "X-Filename": encodeURIComponent(file.name || "pasted"),
      "Content-Type": file.type || "application/octet-stream",
      "X-CSRF-Token": csrfToken(), // for browsers that send no Origin (webclient/web/access.py)
    },
  }).then(function (response) {
    return response.text().then(function (text) {
      if (!response.ok) {
        showError(text || "The file could not be attached.");
        return;
      }
      showError("");
      chips.insertAdjacentHTML("beforeend", text); // rendered and escaped by the server
    });
  }).catch(function () {
    showError("The file could not be sent to the server.");
  });
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
