// Enhancements only: every page works without this script. Times are written by the server in the
// operator's own time zone (the Security page), so the script leaves them alone.
// Live tables: a <table data-live="URL"> follows the server-sent events at URL; each `board` event
// carries the rows as JSON, written as text (never as HTML); the element named by data-empty shows
// only while there are none. `end` stops the updates.
document.querySelectorAll("table[data-live]").forEach((table) => {
  const body = table.querySelector("tbody");
  const status = document.getElementById(table.dataset.status);
  const source = new EventSource(table.dataset.live);
  const cell = (row, text, className) => {
    const td = document.createElement("td");
    if (className) td.className = className;
    td.textContent = text;
    row.appendChild(td);
    return td;
  };
  source.addEventListener("board", (event) => {
    const rows = JSON.parse(event.data).map((entry) => {
      const row = document.createElement("tr");
      cell(row, String(entry.rank), "num");
      const customer = cell(row, "");
      const link = document.createElement("a");
      link.href = "/console/accounts/" + encodeURIComponent(entry.customer);
      link.textContent = entry.name;
      customer.appendChild(link);
      cell(row, entry.score, "num");
      cell(row, String(entry.events), "num");
      cell(row, entry.reached ? "yes" : "");
      return row;
    });
    body.replaceChildren(...rows);
    const empty = document.getElementById(table.dataset.empty);
    if (empty) empty.hidden = rows.length > 0;
    if (status) status.textContent = "Live: updated " + new Date().toLocaleTimeString();
  });
  source.addEventListener("end", () => {
    source.close();
    if (status) status.textContent = "Live updates paused: reload the page to resume them.";
  });
});

// Uploads: a form with data-progress shows how much of its file has been sent, then that the
// server is checking it; the answer replaces the page as a normal post's would.
document.querySelectorAll("form[data-progress]").forEach((form) => {
  const status = document.getElementById(form.dataset.progress);
  form.addEventListener("submit", (event) => {
    if (!window.FormData || !status) return;
    event.preventDefault();
    const request = new XMLHttpRequest();
    request.open("POST", form.action);
    request.upload.addEventListener("progress", (progress) => {
      if (progress.lengthComputable) status.textContent = `Sending the file: ${Math.round((progress.loaded / progress.total) * 100)} %`;
    });
    request.upload.addEventListener("load", () => { status.textContent = "Checking every line of the file…"; });
    request.addEventListener("load", () => {
      if (request.responseURL && new URL(request.responseURL).pathname !== new URL(form.action, location.href).pathname) {
        location.assign(request.responseURL);
      } else {
        document.open();
        document.write(request.responseText);
        document.close();
      }
    });
    request.addEventListener("error", () => { status.textContent = "The upload failed: check the connection and try again."; });
    const data = new FormData(form);
    // The button pressed says what to do with the file (check it, or import it).
    if (event.submitter && event.submitter.name) data.set(event.submitter.name, event.submitter.value);
    request.send(data);
  });
});

// Previews: a <textarea data-preview="URL" data-target="ID"> sends its text, with its form's CSRF
// token, to URL once the writer pauses, and shows the server's answer (Markdown rendered and
// sanitised by the server's allow-list, the same markup the app receives) in the element ID. A
// newer answer always wins; without this script the form's Preview button does the same.
document.querySelectorAll("textarea[data-preview]").forEach((area) => {
  const target = document.getElementById(area.dataset.target);
  const csrf = area.form && area.form.querySelector("input[name=_csrf]");
  if (!target || !csrf) return;
  let timer = null;
  let sent = 0;
  const send = () => {
    const number = ++sent;
    fetch(area.dataset.preview, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ _csrf: csrf.value, body: area.value }),
    }).then((response) => (response.ok && !response.redirected ? response.text() : Promise.reject(response.status)))
      .then((html) => { if (number === sent) target.innerHTML = html; })
      .catch(() => {
        if (number !== sent) return;
        const note = document.createElement("p");
        note.className = "field-error";
        note.textContent = "The preview is not available right now; saving still works.";
        target.replaceChildren(note);
      });
  };
  area.addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(send, 400);
  });
});
