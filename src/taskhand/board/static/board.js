// The board's page: a column per lifecycle status and a card per task, from /api/plan (the
// reader `taskhand show --json` uses), kept live by the event stream. A person moves a task
// by a button, a key, or a drag onto the column the move lands in; the server checks each.

import { notice, read, send, token } from "./api.js";
import { dollars, element, since } from "./dom.js";
import { closeDrawer, openDrawer, openedTask } from "./drawer.js";
import { follow, showWorking } from "./live.js";

const COLUMNS = ["draft", "spec", "needs-input", "plan", "planned", "prototype", "ready",
  "implementing", "review", "qa", "judge", "done", "delivered", "parked", "failed"];
// A key per move, for the focused card; 1-4 pick an open question's option.
const KEYS = { s: "submit", a: "approve", r: "revise", e: "accept", c: "comment",
  o: "reopen", p: "park", w: "respond" };
const KEY_OF = Object.fromEntries(Object.entries(KEYS).map(([key, name]) => [name, key]));

let plan = null;
let waitingBefore = null;  // ids that waited for a person at the last read (null: none yet)

function moveButton(task, name) {
  const button = element("button", "move", name);
  button.type = "button";
  button.dataset.move = name;
  const lands = task.lands?.[name];
  button.title = `${name}${lands ? ` → ${lands}` : ""} (key ${KEY_OF[name] || ""})`;
  button.addEventListener("click", () => send(task.id, name));
  return button;
}

function questionPicker(task, question) {
  const made = element("div", "question");
  made.append(element("p", "", `Q${question.number}: ${question.text}`));
  question.options.forEach((option, index) => {
    const letter = String.fromCharCode(97 + index);
    const label = `(${letter}) ${option}${index === 0 ? " — recommended" : ""}`;
    const button = element("button", "option", label);
    button.type = "button";
    button.dataset.option = letter;
    button.addEventListener("click", () =>
      send(task.id, "answer", { question: `Q${question.number}`, option: letter }));
    made.append(button);
  });
  return made;
}

// What the task waits on: a person (which move), or its dependencies not yet done.
function waitsOn(task) {
  if (task.waits_for) return `waits for ${task.waits_for}`;
  const done = new Set(plan.tasks.filter((t) => t.status === "DONE").map((t) => t.id));
  const open = (task.dependencies || []).filter((id) => !done.has(id));
  return open.length && !task.working ? `waits on ${open.join(", ")}` : "";
}

function card(task) {
  const made = element("article", "card");
  made.dataset.task = task.id;
  made.tabIndex = 0;
  made.classList.toggle("waiting", task.waiting && !task.working);
  made.classList.toggle("working", task.working);
  const title = element("button", "title", task.title);
  title.type = "button";
  title.addEventListener("click", () => openDrawer(task));
  made.append(element("span", "id", task.id), title);
  const facts = element("div", "facts");
  if (task.kind) facts.append(element("span", "kind", task.kind));
  if (task.cost) facts.append(element("span", "cost", dollars(task.cost)));
  made.append(facts);
  if (task.working) {
    const badge = element("p", "badge", task.unit ? `${task.unit.role} · ` : "working");
    if (task.unit) {
      const elapsed = element("span", "elapsed", since(task.unit.started));
      elapsed.dataset.since = task.unit.started;
      badge.append(elapsed);
    }
    made.append(badge);
  }
  const waits = waitsOn(task);
  if (waits) made.append(element("p", "waits", waits));
  for (const question of (task.questions || []).filter((q) => q.open)) {
    made.append(questionPicker(task, question));
  }
  const moves = element("div", "moves");
  for (const name of task.moves || []) if (name !== "answer") moves.append(moveButton(task, name));
  made.append(moves);
  if (task.pr) {
    const link = element("a", "pr", `pull request ${task.pr.split("/").pop()}`);
    link.href = task.pr; link.rel = "noopener noreferrer"; link.target = "_blank";
    made.append(link);
  }
  made.draggable = Object.keys(task.lands || {}).length > 0 || task.working;
  made.addEventListener("dragstart", (drag) => {
    drag.dataTransfer.setData("text/plain", task.id);
    drag.dataTransfer.effectAllowed = "move";
  });
  return made;
}

// A drop onto a column is the move that lands there, if the task has one open; else the
// page says why not, and nothing is sent.
function dropped(taskId, status) {
  const task = plan.tasks.find((t) => t.id === taskId);
  if (!task || task.lifecycle === status) return;
  const move = Object.keys(task.lands || {}).find((name) => task.lands[name] === status);
  if (move) { send(task.id, move); return; }
  let why;
  if (task.working) why = "a unit works on it now; moves wait until it is done";
  else if (Object.keys(task.lands || {}).length === 0) why = "no move of a person is open on it";
  else {
    const open = Object.entries(task.lands).map(([name, to]) => `${name} → ${to}`).join(", ");
    why = `the moves open are ${open}`;
  }
  notice(`${task.id} cannot go from ${task.lifecycle} to ${status}: ${why}`);
}

function column(status, tasks) {
  const made = element("section", "column");
  made.dataset.status = status;
  made.classList.toggle("empty", tasks.length === 0);
  const heading = element("h2", "", status);
  heading.append(element("span", "count", String(tasks.length)));
  made.append(heading, ...tasks.map(card));
  made.addEventListener("dragover", (drag) => { drag.preventDefault(); made.classList.add("over"); });
  made.addEventListener("dragleave", () => made.classList.remove("over"));
  made.addEventListener("drop", (drag) => {
    drag.preventDefault();
    made.classList.remove("over");
    dropped(drag.dataTransfer.getData("text/plain"), status);
  });
  return made;
}

async function refresh() {
  const found = await read("/api/plan");
  if (!found) return;
  plan = found;
  showWorking(plan.tasks);
  const focused = document.activeElement?.closest?.(".card")?.dataset.task;
  document.getElementById("plan-title").textContent = plan.title;
  const byStatus = Object.fromEntries(COLUMNS.map((status) => [status, []]));
  for (const task of plan.tasks) (byStatus[task.lifecycle] ||= []).push(task);
  const columns = Object.entries(byStatus).map(([status, tasks]) => column(status, tasks));
  document.getElementById("columns").replaceChildren(...columns);
  if (focused) document.querySelector(`.card[data-task="${CSS.escape(focused)}"]`)?.focus();
  const waiting = plan.tasks.filter((t) => t.waiting && !t.working);
  document.getElementById("summary").textContent =
    `${plan.tasks.length} task${plan.tasks.length === 1 ? "" : "s"}; ` +
    `${waiting.length} wait${waiting.length === 1 ? "s" : ""} for a person` +
    (token ? "" : " · read-only: open the address the board printed to make moves");
  document.title = waiting.length ? `(${waiting.length}) taskhand board` : "taskhand board";
  announce(waiting);
  const open = openedTask();
  if (open) {
    const task = plan.tasks.find((t) => t.id === open);
    if (task) openDrawer(task);
  }
}

// A browser notification for each task that newly waits for a person (not for those that
// already waited when the page opened).
function announce(waiting) {
  const ids = new Set(waiting.map((t) => t.id));
  if (waitingBefore && "Notification" in window && Notification.permission === "granted") {
    for (const task of waiting.filter((t) => !waitingBefore.has(t.id))) {
      new Notification(`${task.id} waits for you`, { body: `${task.title}: ${task.waits_for}`,
        tag: `taskhand-${task.id}` });
    }
  }
  waitingBefore = ids;
  const ask = document.getElementById("notify");
  ask.hidden = !("Notification" in window) || Notification.permission !== "default";
}

document.getElementById("notify").addEventListener("click", async () => {
  await Notification.requestPermission();
  announce(plan ? plan.tasks.filter((t) => t.waiting && !t.working) : []);
});

// The keyboard: arrows walk the cards, Enter opens the drawer, Escape closes it, a move's
// key makes it on the focused card, 1-4 pick an option of its open question.
document.addEventListener("keydown", (key) => {
  if (key.target.closest?.("input, textarea") || key.ctrlKey || key.metaKey || key.altKey) return;
  if (key.key === "Escape") { closeDrawer(); return; }
  if (key.target.closest?.("#drawer, #live")) return;  // their own keys: scrolling, tabs
  const current = key.target.closest?.(".card");
  if (key.key.startsWith("Arrow")) { walk(current, key.key); key.preventDefault(); return; }
  if (!current || !plan) return;
  const task = plan.tasks.find((t) => t.id === current.dataset.task);
  if (!task) return;
  if (key.key === "Enter" && key.target === current) openDrawer(task);
  else if (KEYS[key.key] && task.moves.includes(KEYS[key.key])) send(task.id, KEYS[key.key]);
  else if ("1234".includes(key.key)) current.querySelectorAll("button.option")[key.key - 1]?.click();
  else if (KEYS[key.key]) {
    notice(`${task.id}: ${KEYS[key.key]} is not open (open: ${task.moves.join(", ") || "none"})`);
  }
});

function walk(current, arrow) {
  const columns = [...document.querySelectorAll(".column")].filter((c) => c.querySelector(".card"));
  if (!current) { columns[0]?.querySelector(".card")?.focus(); return; }
  const here = columns.indexOf(current.closest(".column"));
  const cards = [...columns[here].querySelectorAll(".card")];
  const at = cards.indexOf(current);
  if (arrow === "ArrowDown") cards[at + 1]?.focus();
  if (arrow === "ArrowUp") cards[at - 1]?.focus();
  const side = columns[here + (arrow === "ArrowRight" ? 1 : arrow === "ArrowLeft" ? -1 : 0)];
  if (side && side !== columns[here]) {
    const there = [...side.querySelectorAll(".card")];
    there[Math.min(at, there.length - 1)]?.focus();
  }
}

document.getElementById("close").addEventListener("click", closeDrawer);
document.addEventListener("board:changed", refresh);
// Working badges count up between reads.
setInterval(() => {
  for (const shown of document.querySelectorAll(".elapsed[data-since]")) {
    shown.textContent = since(shown.dataset.since);
  }
}, 1000);

refresh();
follow(refresh);
