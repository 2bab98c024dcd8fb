// Live: the plan's events through Server-Sent Events (the browser resumes with
// Last-Event-ID after a drop, so nothing is missed), shown in the Live dock as they come,
// and a call to read the plan again when one may have moved a card.

import { element } from "./dom.js";

const KEPT = 200;  // events the dock keeps on the page; older ones drop off
// Kinds that change nothing a card shows: the dock lists them, the board stays as it is.
const QUIET = new Set(["step", "warning", "gate", "verdict"]);

export function follow(onMove) {
  const stream = new EventSource("/api/events");
  let pending = null;
  const soon = () => {
    clearTimeout(pending);
    pending = setTimeout(onMove, 50);  // a burst of events reads the plan once
  };
  stream.addEventListener("open", soon);
  stream.addEventListener("message", (message) => {
    let event;
    try { event = JSON.parse(message.data); } catch { return; }
    show(event);
    if (!QUIET.has(event.kind)) soon();
  });
  return stream;
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
