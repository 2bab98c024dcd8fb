// Live: the plan's events through Server-Sent Events (the browser resumes with
// Last-Event-ID after a drop, so nothing is missed), shown in the Live dock as they come,
// and a call to read the plan again when one may have moved a card. Beside them, the tail of
// each working unit's transcript as the harness writes it.

import { element } from "./dom.js";

const KEPT = 200;  // events the dock keeps on the page; older ones drop off
// Kinds that change nothing a card shows: the dock lists them, the board stays as it is.
const QUIET = new Set(["step", "warning", "gate", "verdict"]);
const TAIL = 30;  // transcript lines a working unit's pane shows
const EVERY = 2000;  // ms between reads of a working unit's transcript, besides its events

const working = new Map();  // task id -> what its pane shows: { task, unit, pane, ... }
let ticking = null;
let drawn = false;

export function follow(onMove) {
  // The newest events for the dock, not the whole history; a reconnect resumes after the
  // last one heard (the browser sends Last-Event-ID), missing nothing.
  const stream = new EventSource(`/api/events?tail=${KEPT}`);
  let pending = null;
  const soon = () => {
    clearTimeout(pending);
    pending = setTimeout(onMove, 50);  // a burst of events reads the plan once
  };
  // The events written before a connection (the server says when it has sent them all)
  // are in the plan the page reads anyway: only those after them read it again.
  let live = false;
  stream.addEventListener("caught_up", () => {
    if (live) soon();  // a reconnect: what was missed meanwhile may have moved a card
    live = true;
  });
  stream.addEventListener("message", (message) => {
    let event;
    try { event = JSON.parse(message.data); } catch { return; }
    show(event);
    const shown = working.get(event.task_id);
    if (shown) readTail(shown);
    if (live && !QUIET.has(event.kind)) soon();
  });
  return stream;
}

// The working units as the plan just read says: a pane per task a unit works on (several
// when jobs run side by side), each following its unit's transcript; a line when none works.
export function showWorking(tasks) {
  const now = new Map(tasks.filter((t) => t.working).map((t) => [t.id, t]));
  let changed = false;
  for (const [id, shown] of working) {
    const task = now.get(id);
    if (!task || task.unit?.id !== shown.unit?.id) { working.delete(id); changed = true; }
  }
  for (const task of now.values()) {
    if (working.has(task.id)) continue;
    const shown = { task: task.id, unit: task.unit, pane: workingPane(task) };
    working.set(task.id, shown);
    changed = true;
    readTail(shown);
  }
  if (changed || !drawn) {
    const panes = [...working.values()].map((shown) => shown.pane);
    document.getElementById("live-working").replaceChildren(
      ...(panes.length ? panes : [element("p", "idle", "No unit is working.")]));
    drawn = true;
  }
  if (working.size && !ticking) ticking = setInterval(() => working.forEach(readTail), EVERY);
  if (!working.size && ticking) { clearInterval(ticking); ticking = null; }
}

function workingPane(task) {
  const pane = element("section", "working");
  pane.dataset.task = task.id;
  pane.append(element("h3", "", `Working: ${task.id} ${task.unit ? task.unit.role : ""}`.trim()));
  const list = element("ol", "lines");
  if (task.unit) pane.dataset.unit = task.unit.id;
  else list.append(element("li", "note", "no unit has started yet"));
  pane.append(list);
  return pane;
}

// One read at a time per pane; an event that comes during one asks for one more after it.
async function readTail(shown) {
  if (!shown.unit) return;
  if (shown.reading) { shown.again = true; return; }
  shown.reading = true;
  try {
    const unit = `/api/tasks/${encodeURIComponent(shown.task)}/units/${shown.unit.id}`;
    const answer = await fetch(`${unit}/transcript?tail=${TAIL}`,
      { headers: { "Accept": "application/json" } });
    const found = await answer.json();
    if (answer.ok) drawTail(shown.pane.querySelector("ol.lines"), found.lines);
  } catch {
    // The board's server is away for a moment: the next event or tick reads again.
  } finally {
    shown.reading = false;
  }
  if (shown.again && working.get(shown.task) === shown) { shown.again = false; readTail(shown); }
}

// The lines as the drawer's Units tab draws them (who, and what), always as text; the list
// keeps to its end unless a person scrolled up in it.
function drawTail(list, lines) {
  const atEnd = list.scrollHeight - list.scrollTop - list.clientHeight < 8;
  list.replaceChildren(...lines.map((line) => {
    const item = element("li", "line");
    item.dataset.role = line.role;
    item.append(element("span", "role", line.role || "·"), element("pre", "text", line.text));
    return item;
  }));
  if (atEnd) list.scrollTop = list.scrollHeight;
}

function show(event) {
  const list = document.getElementById("live-events");
  const line = element("li", "event");
  line.dataset.kind = event.kind;
  line.append(element("time", "", (event.ts || "").slice(11, 19)),
    element("span", "task", event.task_id || ""), element("span", "kind", event.kind),
    element("span", "what", summary(event)));
  list.prepend(line);
  while (list.children.length > KEPT) list.lastChild.remove();
  document.getElementById("live-count").textContent = `${list.children.length}`;
}

// A few words of what happened, from the event's own fields.
function summary(event) {
  const words = event.after ? [`${event.before} → ${event.after}`, event.by] : [];
  for (const key of ["role", "case", "outcome", "status", "message", "reason", "url"]) {
    const value = event[key];
    if (value !== undefined && value !== null && value !== "") words.push(String(value));
  }
  return words.join(" · ");
}
