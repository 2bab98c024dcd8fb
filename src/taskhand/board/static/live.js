// Live: the plan's events through Server-Sent Events, shown in the Live dock as they come,
// and a call to read the plan again when one may have moved a card. Beside them, the tail of
// each working unit's transcript as the harness writes it. The stream is read with fetch, not
// EventSource, which cannot send the token's header; a dropped stream is opened again with
// Last-Event-ID, as EventSource would, so nothing is missed.

import { answering, away, locked, read, stopped, withToken } from "./api.js";
import { element } from "./dom.js";

const KEPT = 200;  // events the dock keeps on the page; older ones drop off
// Kinds that change nothing a card shows: the dock lists them, the board stays as it is.
const QUIET = new Set(["step", "warning", "gate", "verdict"]);
const TAIL = 30;  // transcript lines a working unit's pane shows
const EVERY = 2000;  // ms between reads of a working unit's transcript, besides its events
const AGAIN = 1000;  // ms before a dropped stream is opened again

const working = new Map();  // task id -> what its pane shows: { task, unit, pane, ... }
let ticking = null;
let drawn = false;

export async function follow(onMove) {
  let pending = null;
  const soon = () => {
    clearTimeout(pending);
    pending = setTimeout(onMove, 50);  // a burst of events reads the plan once
  };
  // The events written before a connection (the server says when it has sent them all)
  // are in the plan the page reads anyway: only those after them read it again.
  let live = false;
  const heard = {
    caught_up() {
      if (live) soon();  // a reconnect: what was missed meanwhile may have moved a card
      live = true;
    },
    message(data) {
      let event;
      try { event = JSON.parse(data); } catch { return; }
      show(event);
      const shown = working.get(event.task_id);
      if (shown) readTail(shown);
      if (live && !QUIET.has(event.kind)) soon();
    },
  };
  // The newest events for the dock, not the whole history; a reconnect resumes after the
  // last one heard, missing nothing.
  const last = { id: null };
  for (;;) {
    const ended = await listen(last, heard);
    if (ended === "locked") return;
    await new Promise((done) => setTimeout(done, AGAIN));
  }
}

// One connection of the stream, until it drops: each message to `heard`, by its event name.
async function listen(last, heard) {
  const headers = withToken({ "Accept": "text/event-stream" });
  if (last.id !== null) headers["Last-Event-ID"] = last.id;
  let answer;
  try {
    answer = await fetch(`/api/events?tail=${KEPT}`, { headers, cache: "no-store" });
  } catch {
    away();
    return "dropped";
  }
  if (answer.status === 401) { locked(); return "locked"; }
  if (!answer.ok || !answer.body) { away(); return "dropped"; }
  answering();
  const lines = answer.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await lines.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        dispatch(buffer.slice(0, end), last, heard);
        buffer = buffer.slice(end + 2);
      }
    }
  } catch {
    // The connection broke: opened again after a moment.
  }
  away();
  return "dropped";
}

// One message of the stream (its lines up to a blank one): `id:`, `event:`, `data:`;
// a line starting with a colon is a comment (the server's heartbeat).
function dispatch(block, last, heard) {
  let name = "message";
  const data = [];
  for (const line of block.split("\n")) {
    const colon = line.indexOf(":");
    if (colon === 0) continue;
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") last.id = value;
    else if (field === "event") name = value;
    else if (field === "data") data.push(value);
  }
  if (data.length && heard[name]) heard[name](data.join("\n"));
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
  if (!shown.unit || stopped) return;
  if (shown.reading) { shown.again = true; return; }
  shown.reading = true;
  try {
    const unit = `/api/tasks/${encodeURIComponent(shown.task)}/units/${shown.unit.id}`;
    // A refusal is not shown: the board's server away for a moment, the next event or tick
    // reads again.
    const found = await read(`${unit}/transcript?tail=${TAIL}`, () => {});
    if (found) drawTail(shown.pane.querySelector("ol.lines"), found.lines);
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
  // The merge queue's: whom it joins behind, what its checks run on top of, how they ended.
  const listed = (ids) => (Array.isArray(ids) && ids.length ? ids.join(", ") : "");
  if (listed(event.ahead)) words.push(`behind ${listed(event.ahead)}`);
  if (listed(event.on)) words.push(`on top of ${listed(event.on)}`);
  if (event.kind === "gated") {
    words.push(event.current === false ? "moot" : event.ok ? "passed" : "failed");
  }
  return words.join(" · ");
}
