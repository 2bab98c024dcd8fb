// The board's page: a column per lifecycle status and a card per task, from /api/plan (the
// reader `taskhand show --json` uses), kept live by the event stream. A person moves a task
// by a button, a key, or a drag onto the column the move lands in; the server checks each.

import { locked, notice, send, stopped, token, withToken } from "./api.js";
import { dollars, element, since, webAddress } from "./dom.js";
import { closeDrawer, openDrawer, openedTask } from "./drawer.js";
import { follow, showWorking } from "./live.js";
import { queueBadge, showQueue } from "./queue.js";

const COLUMNS = ["draft", "spec", "needs-input", "plan", "planned", "prototype", "ready",
  "implementing", "review", "qa", "judge", "done", "delivered", "parked", "failed"];
// A key per move, for the focused card; 1-4 pick an open question's option.
const KEYS = { s: "submit", a: "approve", r: "revise", e: "accept", c: "comment",
  o: "reopen", p: "park", w: "respond" };
const KEY_OF = Object.fromEntries(Object.entries(KEYS).map(([key, name]) => [name, key]));

let plan = null;
let byId = new Map();  // the plan's tasks by id, as last drawn
let waitingBefore = null;  // ids that waited for a person at the last read (null: none yet)

// Cards carry no listeners of their own: one listener per kind on the columns serves all,
// so a board of a thousand cards is quick to build.
function moveButton(task, name) {
  const button = element("button", "move", name);
  button.type = "button";
  button.dataset.move = name;
  const lands = task.lands?.[name];
  button.title = `${name}${lands ? ` → ${lands}` : ""} (key ${KEY_OF[name] || ""})`;
  return button;
}

function questionPicker(question) {
  const made = element("div", "question");
  made.append(element("p", "", `Q${question.number}: ${question.text}`));
  question.options.forEach((option, index) => {
    const letter = String.fromCharCode(97 + index);
    const label = `(${letter}) ${option}${index === 0 ? " — recommended" : ""}`;
    const button = element("button", "option", label);
    button.type = "button";
    button.dataset.option = letter;
    button.dataset.question = `Q${question.number}`;
    made.append(button);
  });
  return made;
}

// What the task waits on: a person (which move), or its dependencies not yet done.
function waitsOn(task, done) {
  if (task.waits_for) return `waits for ${task.waits_for}`;
  const open = (task.dependencies || []).filter((id) => !done.has(id));
  return open.length && !task.working ? `waits on ${open.join(", ")}` : "";
}

function card(task, done, queued) {
  const made = element("article", "card");
  made.dataset.task = task.id;
  made.tabIndex = 0;
  made.classList.toggle("waiting", task.waiting && !task.working);
  made.classList.toggle("working", task.working);
  const title = element("button", "title", task.title);
  title.type = "button";
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
  if (queued) made.append(queueBadge(queued));
  const waits = waitsOn(task, done);
  if (waits) made.append(element("p", "waits", waits));
  for (const question of (task.questions || []).filter((q) => q.open)) {
    made.append(questionPicker(question));
  }
  const moves = element("div", "moves");
  for (const name of task.moves || []) if (name !== "answer") moves.append(moveButton(task, name));
  made.append(moves);
  const address = task.pr && webAddress(task.pr);
  if (address) {
    const link = element("a", "pr", `pull request ${task.pr.split("/").pop()}`);
    link.href = address; link.rel = "noopener noreferrer"; link.target = "_blank";
    made.append(link);
  } else if (task.pr) {
    made.append(element("p", "pr", `pull request: ${task.pr}`));  // shown, never a link
  }
  made.draggable = Object.keys(task.lands || {}).length > 0 || task.working;
  return made;
}

function taskOf(element) {
  const id = element?.closest?.(".card")?.dataset.task;
  return id === undefined ? undefined : byId.get(id);
}

const board = document.getElementById("columns");
board.addEventListener("click", (click) => {
  const button = click.target.closest("button");
  const task = taskOf(button);
  if (!task) return;
  if (button.classList.contains("title")) openDrawer(task);
  else if (button.dataset.move) send(task.id, button.dataset.move);
  else if (button.dataset.option) {
    send(task.id, "answer", { question: button.dataset.question, option: button.dataset.option });
  }
});
board.addEventListener("dragstart", (drag) => {
  const task = taskOf(drag.target);
  if (!task) return;
  drag.dataTransfer.setData("text/plain", task.id);
  drag.dataTransfer.effectAllowed = "move";
});
board.addEventListener("dragover", (drag) => {
  const column = drag.target.closest?.(".column");
  if (!column) return;
  drag.preventDefault();
  for (const other of board.querySelectorAll(".column.over")) {
    if (other !== column) other.classList.remove("over");
  }
  column.classList.add("over");
});
board.addEventListener("dragleave", (drag) => {
  if (drag.target.classList?.contains("column")) drag.target.classList.remove("over");
});
board.addEventListener("drop", (drag) => {
  const column = drag.target.closest?.(".column");
  if (!column) return;
  drag.preventDefault();
  column.classList.remove("over");
  dropped(drag.dataTransfer.getData("text/plain"), column.dataset.status);
});

// A drop onto a column is the move that lands there, if the task has one open; else the
// page says why not, and nothing is sent.
function dropped(taskId, status) {
  const task = byId.get(taskId);
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

function column(status, tasks, done, queued) {
  const made = element("section", "column");
  made.dataset.status = status;
  made.classList.toggle("empty", tasks.length === 0);
  const heading = element("h2", "", status);
  heading.append(element("span", "count", String(tasks.length)));
  made.append(heading, ...tasks.map((task) => card(task, done, queued.get(task.id))));
  return made;
}

let shownText = "";  // the plan's answer as last drawn: an answer the same draws nothing

async function refresh() {
  if (stopped) return;
  let answer;
  try {
    answer = await fetch("/api/plan", { headers: withToken({ "Accept": "application/json" }) });
  } catch {
    return;  // the board away: the event stream says so, and reads again when it is back
  }
  if (answer.status === 401) { locked(); return; }
  const text = await answer.text();
  if (!answer.ok) {
    const data = JSON.parse(text);
    notice(`${data.error} (fix: ${data.fix})`);
    return;
  }
  if (text !== shownText) {
    shownText = text;
    draw(JSON.parse(text));
  }
  const open = openedTask();
  const task = open && byId.get(open);
  if (task) openDrawer(task);
}

function draw(found) {
  plan = found;
  byId = new Map(plan.tasks.map((task) => [task.id, task]));
  showWorking(plan.tasks);
  const focused = document.activeElement?.closest?.(".card")?.dataset.task;
  document.getElementById("plan-title").textContent = plan.title;
  const done = new Set(plan.tasks.filter((t) => t.status === "DONE").map((t) => t.id));
  const queued = new Map((plan.queue || []).map((entry) => [entry.task_id, entry]));
  showQueue(plan.queue);
  const byStatus = Object.fromEntries(COLUMNS.map((status) => [status, []]));
  for (const task of plan.tasks) (byStatus[task.lifecycle] ||= []).push(task);
  const columns = Object.entries(byStatus)
    .map(([status, tasks]) => column(status, tasks, done, queued));
  board.replaceChildren(...columns);
  if (focused) document.querySelector(`.card[data-task="${CSS.escape(focused)}"]`)?.focus();
  const waiting = plan.tasks.filter((t) => t.waiting && !t.working);
  document.getElementById("summary").textContent =
    `${plan.tasks.length} task${plan.tasks.length === 1 ? "" : "s"}; ` +
    `${waiting.length} wait${waiting.length === 1 ? "s" : ""} for a person`;
  document.title = waiting.length ? `(${waiting.length}) taskhand board` : "taskhand board";
  announce(waiting);
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
  const task = byId.get(current.dataset.task);
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
// Working badges and gates' times count up between reads.
setInterval(() => {
  for (const shown of document.querySelectorAll(".elapsed[data-since]")) {
    shown.textContent = since(shown.dataset.since);
  }
}, 1000);

// Without the token the page shows nothing of the board but how to open it.
if (token) {
  refresh();
  follow(refresh);
} else {
  locked();
}
