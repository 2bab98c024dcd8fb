// A task's drawer: what the lifecycle wrote for it and what became of its work, read from
// /api/tasks/TASK each time it opens (and again when the task moves while it is open).

import { read } from "./api.js";
import { element, table, dollars } from "./dom.js";

let opened = null;

export function openedTask() {
  return opened;
}

function section(heading, ...content) {
  const made = element("section", "part");
  made.append(element("h3", "", heading), ...content);
  return made;
}

export async function openDrawer(task) {
  opened = task.id;
  const found = await read(`/api/tasks/${encodeURIComponent(task.id)}`);
  if (!found || opened !== task.id) return;
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
      `${u.tokens_in}/${u.tokens_out}`, dollars(u.cost)]))));
  document.getElementById("drawer-body").replaceChildren(...parts);
  document.getElementById("drawer").hidden = false;
}

export function closeDrawer() {
  opened = null;
  document.getElementById("drawer").hidden = true;
}
