// hermes-memory dashboard: the only script. Asks before a destructive form is sent.
// Pages work without it; nothing here touches memory or transcript text.
"use strict";
document.addEventListener("submit", function (event) {
  var form = event.target;
  var question = form && form.getAttribute && form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
});
