// The board's page: columns of cards from /api/plan, kept live by the event stream, and a
// person's moves sent with the token from the address's #token=... (never sent to the server
// in the address, so never logged). Every text goes in as textContent: task and agent text
// are untrusted.
"use strict";

const COLUMNS = ["draft", "spec", "needs-input", "plan", "planned", "prototype", "ready",
  "implementing", "review", "qa", "judge", "done", "delivered", "parked", "failed"];
// What a move asks of the person before it is sent, by the field its body carries.
const ASKS = { revise: ["text", "What should the plan change?"],
  comment: ["text", "Your comment:"], respond: ["text", "Your answer:"],
  park: ["why", "Why park it?"] };

const token = (() => {
  const found = new URLSearchParams(location.hash.slice(1)).get("token");
  if (found) {
    sessionStorage.setItem("taskhand-token", found);
    history.replaceState(null, "", location.pathname);  // out of the address bar and history
  }
  return sessionStorage.getItem("taskhand-token") || "";
})();

function element(tag, className, text) {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (text !== undefined) made.textContent = text;
  return made;
}

function notice(text) {
  const shown = document.getElementById("notice");
  shown.textContent = text;
  shown.hidden = !text;
}

async function move(task, name, body) {
  const answer = await fetch(`/api/tasks/${encodeURIComponent(task)}/${name}`, {
    method: "POST",
    headers: { "Content-Type": "application/json", "Authorization": `Bearer ${token}` },
    body: JSON.stringify(body),
  });
  const data = await answer.json();
  notice(answer.ok ? "" : `${task}: ${data.error} (fix: ${data.fix})`);
  await refresh();
}

function moveButton(task, name) {
  const button = element("button", "move", name);
  button.dataset.move = name;
  button.addEventListener("click", () => {
    const ask = ASKS[name];
    if (!ask) return move(task.id, name, {});
    const text = prompt(ask[1]);
    if (text !== null) move(task.id, name, { [ask[0]]: text });
  });
  return button;
}

function card(task) {
  const made = element("article", "card");
  made.dataset.task = task.id;
  if (task.waiting) made.classList.add("waiting");
  if (task.working) made.classList.add("working");
  const title = element("span", "title", task.title);
  title.addEventListener("click", () => openDrawer(task));
  made.append(element("span", "id", task.id), title);
  if (task.kind) made.append(element("div", "kind", task.kind));
  if (task.waits_for) made.append(element("p", "waits", `waits for ${task.waits_for}`));
  for (const question of (task.questions || []).filter((q) => q.open)) {
    made.append(element("p", "question", `Q${question.number}: ${question.text}`));
    question.options.forEach((option, index) => {
      const letter = String.fromCharCode(97 + index);
      const label = `(${letter}) ${option}${index === 0 ? " — recommended" : ""}`;
      const button = element("button", "option", label);
      button.addEventListener("click", () =>
        move(task.id, "answer", { question: `Q${question.number}`, option: letter }));
      made.append(button);
    });
  }
  const moves = element("div", "moves");
  for (const name of task.moves || []) if (name !== "answer") moves.append(moveButton(task, name));
  made.append(moves);
  if (task.pr) {
    const link = element("a", "pr", "pull request");
    link.href = task.pr; link.rel = "noopener noreferrer"; link.target = "_blank";
    made.append(link);
  }
  return made;
}

function section(heading, ...content) {
  const made = element("section", "part");
  made.append(element("h3", "", heading), ...content);
  return made;
}

function table(columns, rows) {
  const made = element("table");
  const head = element("tr");
  for (const name of columns) head.append(element("th", "", name));
  made.append(head);
  for (const row of rows) {
    const line = element("tr");
    for (const cell of row) line.append(element("td", "", String(cell ?? "")));
    made.append(line);
  }
  return made;
}

let opened = null;

async function openDrawer(task) {
  opened = task.id;
  const answer = await fetch(`/api/tasks/${encodeURIComponent(task.id)}`);
  const found = await answer.json();
  if (!answer.ok) { notice(`${found.error} (fix: ${found.fix})`); return; }
  document.getElementById("drawer-title").textContent = `${task.id} ${task.title}`;
  const parts = [section("Task", element("pre", "", task.description || ""))];
  if (found.spec) parts.push(section("Spec", element("pre", "spec", found.spec)));
  if (found.plan) parts.push(section("Plan", element("pre", "plan", found.plan)));
  if (found.questions.length) {
    parts.push(section("Questions", table(["", "question", "answer"], found.questions.map((q) =>
      [`Q${q.number}`, q.text, q.open ? "(open)" : `${q.choice || ""} ${q.note || ""}`]))));
  }
  if (found.pictures.length) {
    parts.push(section("Pictures", ...found.pictures.map((name) => {
      const picture = element("img");
      picture.alt = name;
      picture.src = `/api/tasks/${encodeURIComponent(task.id)}/pictures/${encodeURIComponent(name)}`;
      return picture;
    })));
  }
  if (found.attempts.length) {
    parts.push(section("Attempts", table(["#", "outcome", "summary"], found.attempts.map((a) =>
      [a.iteration, a.outcome, a.summary]))));
  }
  parts.push(section("Units", table(["role", "agent", "model", "outcome", "tokens", "$"],
    found.units.map((u) => [u.role, u.agent, u.model, u.outcome,
      `${u.tokens_in}/${u.tokens_out}`, u.cost.toFixed(4)]))));
  document.getElementById("drawer-body").replaceChildren(...parts);
  document.getElementById("drawer").hidden = false;
}

document.getElementById("close").addEventListener("click", () => {
  opened = null;
  document.getElementById("drawer").hidden = true;
});

async function refresh() {
  const answer = await fetch("/api/plan");
  const plan = await answer.json();
  if (!answer.ok) { notice(`${plan.error} (fix: ${plan.fix})`); return; }
  document.getElementById("plan-title").textContent = plan.title;
  const columns = document.getElementById("columns");
  columns.replaceChildren();
  for (const status of COLUMNS) {
    const tasks = plan.tasks.filter((t) => t.lifecycle === status);
    const column = element("section", "column");
    column.dataset.status = status;
    const heading = element("h2", "", status);
    heading.append(element("span", "count", String(tasks.length)));
    column.append(heading, ...tasks.map(card));
    columns.append(column);
  }
  const waiting = plan.tasks.filter((t) => t.waiting).length;
  document.getElementById("summary").textContent =
    `${plan.tasks.length} task${plan.tasks.length === 1 ? "" : "s"}; ` +
    `${waiting} wait${waiting === 1 ? "s" : ""} for a person`;
  document.title = waiting ? `(${waiting}) taskhand board` : "taskhand board";
}

refresh();
// Each event may move a card: read the plan again (the browser resumes with Last-Event-ID).
const stream = new EventSource("/api/events");
let pending = null;
stream.addEventListener("open", () => refresh());
for (const kind of ["task_moved", "task_concluded", "question_asked", "unit_started",
  "unit_finished", "run_finished", "delivered"]) {
  stream.addEventListener(kind, () => {
    clearTimeout(pending);
    pending = setTimeout(refresh, 100);
  });
}
