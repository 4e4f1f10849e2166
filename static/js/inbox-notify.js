// The approval inbox (templates/inbox.html): a question that was not there at the last poll is told with a system
// notification, if the person turned them on (notify.js). State kept here: the keys seen so far.

import { notificationsWanted } from "./notify.js";

const inbox = document.getElementById("inbox");

function keys() {
  return new Set(Array.from(inbox.querySelectorAll(".inbox-item"), (item) => item.dataset.key));
}

if (inbox) {
  let seen = keys();
  document.body.addEventListener("htmx:afterSettle", function () {
    const now = keys();
    const added = Array.from(now).filter((key) => !seen.has(key));
    seen = now;
    inbox.dataset.newQuestions = String(added.length);
    if (added.length && notificationsWanted()) {
      const notification = new Notification("Waiting for you — inbox", {
        body: added.length === 1 ? "A new question from an agent." : added.length + " new questions from agents.",
        tag: "inbox",
      });
      notification.onclick = function () {
        window.focus();
        notification.close();
      };
    }
  });
}
