// The merge queue, from the plan's answer (`queue`, front first): a strip over the columns
// while candidates wait to land (what gates on top of what, what passed, what waits), and a
// line on each queued card. Every text goes in as text.

import { element, since } from "./dom.js";

export function showQueue(queue) {
  const strip = document.getElementById("queue");
  const entries = queue || [];
  strip.hidden = entries.length === 0;
  const list = element("ol", "entries");
  list.append(...entries.map((entry) => {
    const item = element("li", "entry");
    item.dataset.task = entry.task_id;
    item.dataset.state = entry.state;
    item.append(element("span", "id", entry.task_id), " ", ...standing(entry));
    return item;
  }));
  strip.replaceChildren(element("h2", "", "Merge queue"), list);
}

// A queued card's line: `merge queue: gating on top of T-001 0:12`.
export function queueBadge(entry) {
  const badge = element("p", "queue", "merge queue: ");
  badge.dataset.state = entry.state;
  badge.append(...standing(entry));
  return badge;
}

// Where the entry stands, in the view's words, and while it gates, for how long (counting up).
function standing(entry) {
  const shown = [element("span", "state", entry.text)];
  if (entry.state === "gating" && entry.since) {
    const elapsed = element("span", "elapsed", since(entry.since));
    elapsed.dataset.since = entry.since;
    shown.push(" ", elapsed);
  }
  return shown;
}
