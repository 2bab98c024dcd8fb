// A task's drawer: tabs over what the lifecycle wrote for it and what became of its work, read
// from /api/tasks/TASK each time the board opens it, and again after each event while it is
// open. The tab picked stays; the drawer's elements stay, and a tab's content is replaced only
// when what it shows changed, so nothing flickers while a run goes on.

import { picture as shownPicture, read, send } from "./api.js";
import { element } from "./dom.js";
import { attemptsTab, diffTab, unitsTab } from "./work.js";

// Each tab: whether it has something to show (Task always has), and how it is drawn. A tab
// draws into a fresh element; those of the work (diff, transcripts) may read more first.
const TABS = {
  Task: { has: () => true, draw: taskTab },
  Questions: { has: (task, found) => found.questions.length > 0, draw: questionsTab },
  Plan: { has: (task, found) => Boolean(found.plan), draw: planTab },
  Prototype: {
    has: (task, found) => found.prototypes.length > 0 || task.lifecycle === "prototype",
    draw: prototypeTab,
  },
  Attempts: { has: (task, found) => found.attempts.some((a) => a.ledger), draw: attemptsTab },
  Diff: { has: (task, found) => found.attempts.some((a) => a.candidate_sha), draw: diffTab },
  Units: { has: (task, found) => found.units.length > 0, draw: unitsTab },
  Evidence: {
    has: (task, found) => found.evidence.criteria.length > 0 &&
      (found.evidence.walked || found.evidence.criteria.some((c) => c.picture)),
    draw: evidenceTab,
  },
};

// The tab a task waiting for a person opens on: where that person acts.
const WAITS_AT = { "needs-input": "Questions", planned: "Plan", prototype: "Prototype" };

let opened = null;  // the task shown
let picked = "Task";  // kept while the drawer is redrawn, and for the next task that has it
let last = null;  // the task and its details last read: a click on a tab draws from these
let drawn = "";  // what the tab shown was drawn from; the same again redraws nothing
let reading = 0;  // the newest read and drawing: an older one that ends late is dropped
let drawing = 0;

export function openedTask() {
  return opened;
}

export async function openDrawer(task) {
  if (opened !== task.id) {
    drawn = "";
    if (task.waiting && WAITS_AT[task.lifecycle]) picked = WAITS_AT[task.lifecycle];
  }
  opened = task.id;
  const mine = ++reading;
  const found = await read(`/api/tasks/${encodeURIComponent(task.id)}`);
  if (!found || mine !== reading || opened !== task.id) return;
  last = { task, found };
  await show();
}

export function closeDrawer() {
  opened = null;
  last = null;
  drawn = "";
  reading++;
  drawing++;
  document.getElementById("drawer").hidden = true;
}

// Draw the tab bar and the picked tab from `last`. The tabs of the work may read first (an
// attempt's diff, a unit's transcript), and call `redraw` when a click of theirs changes
// what they show.
async function show() {
  if (!last) return;
  const mine = ++drawing;
  const { task, found } = last;
  const names = Object.keys(TABS).filter((name) => TABS[name].has(task, found));
  if (!names.includes(picked)) picked = "Task";
  const parts = frame();
  document.getElementById("drawer-title").textContent = `${task.id} ${task.title}`;
  const bar = JSON.stringify([names, picked]);
  if (parts.tabs.dataset.shows !== bar) {  // kept as it is otherwise, and the focus in it
    parts.tabs.replaceChildren(...names.map((name) => tabButton(name)));
    parts.tabs.dataset.shows = bar;
  }
  const from = JSON.stringify([picked, task, found]);
  if (from !== drawn) {
    const content = await TABS[picked].draw(task, found, redraw);
    if (mine !== drawing) return;
    drawn = from;
    parts.content.replaceChildren(...[content].flat());
  }
  document.getElementById("drawer").hidden = false;
}

function redraw() {
  drawn = "";
  show();
}

// The tab bar and the tab's content, made once and kept.
function frame() {
  let tabs = document.getElementById("drawer-tabs");
  if (!tabs) {
    tabs = element("nav", "tabs");
    tabs.id = "drawer-tabs";
    tabs.setAttribute("role", "tablist");
    const content = element("div", "tab");
    content.id = "drawer-tab";
    content.setAttribute("role", "tabpanel");
    document.getElementById("drawer-body").replaceChildren(tabs, content);
  }
  return { tabs, content: document.getElementById("drawer-tab") };
}

function tabButton(name) {
  const button = element("button", "tab-button", name);
  button.type = "button";
  button.dataset.tab = name;
  button.setAttribute("role", "tab");
  button.setAttribute("aria-selected", String(name === picked));
  button.addEventListener("click", () => {
    picked = name;
    show();
  });
  return button;
}

function section(heading, ...content) {
  const made = element("section", "part");
  made.append(element("h3", "", heading), ...content);
  return made;
}

function picture(task, name) {
  return shownPicture(
    `/api/tasks/${encodeURIComponent(task.id)}/pictures/${encodeURIComponent(name)}`, name);
}

function taskTab(task, found) {
  const standing = [task.lifecycle, task.waits_for && `waits for ${task.waits_for}`]
    .filter(Boolean).join(" · ");
  const parts = [element("p", "standing", standing),
    section("Description", element("pre", "description", task.description || "(none)"))];
  if (found.criteria.length) {
    const list = element("ol", "criteria");
    for (const criterion of found.criteria) {
      const item = element("li", "criterion");
      if (criterion.tag) item.append(element("span", `tag ${criterion.tag}`, criterion.tag));
      item.append(element("span", "text", criterion.text));
      if (criterion.check) item.append(element("code", "check", criterion.check));
      list.append(item);
    }
    parts.push(section("Acceptance criteria", list));
  }
  if (found.spec) parts.push(section("Spec", element("pre", "spec", found.spec)));
  return parts;
}

function questionsTab(task, found) {
  const answering = (task.moves || []).includes("answer");
  return found.questions.map((question) => {
    const made = element("section", "question");
    made.dataset.question = question.number;
    made.append(element("h3", "", `Q${question.number} · ${question.open ? "open" : "answered"}`),
      element("p", "asks", question.text));
    const options = element("ol", "options");
    question.options.forEach((option, index) => {
      const letter = String.fromCharCode(97 + index);
      const recommended = index === 0 && !/recommended/i.test(option);  // the first, unless it says so
      const label = `(${letter}) ${option}${recommended ? " — recommended" : ""}`;
      const item = element("li", index === 0 ? "option recommended" : "option");
      if (question.open && answering) {
        const button = element("button", "option", label);
        button.type = "button";
        button.dataset.option = letter;
        button.addEventListener("click", () =>
          send(task.id, "answer", { question: `Q${question.number}`, option: letter }));
        item.append(button);
      } else {
        item.append(element("span", "", label));
        if (question.choice === letter) item.append(element("strong", "chosen", " ✓ chosen"));
      }
      options.append(item);
    });
    made.append(options);
    if (question.note) made.append(element("p", "note", `Note: ${question.note}`));
    return made;
  });
}

function planTab(task, found) {
  return [row(task, [["approve", "Approve"], ["revise", "Request changes"]]),
    element("pre", "plan", found.plan)];
}

function prototypeTab(task, found) {
  const parts = [row(task, [["accept", "Accept"], ["comment", "Comment"]])];
  if (!found.prototypes.length) parts.push(element("p", "empty", "The designer left no picture."));
  for (const name of found.prototypes) {
    const figure = element("figure", "prototype");
    figure.append(picture(task, name), element("figcaption", "", name));
    parts.push(figure);
  }
  return parts;
}

function evidenceTab(task, found) {
  return found.evidence.criteria.map((criterion) => {
    const made = element("figure", "evidence");
    made.dataset.criterion = criterion.number;
    made.append(element("figcaption", "", `${criterion.number}. ${criterion.text}`));
    made.append(criterion.picture ? picture(task, criterion.picture)
      : element("p", "empty", "not walked: qa left no screenshot of it"));
    return made;
  });
}

// The moves a tab offers, as [name, label]: a button for each one the task has open now.
function row(task, offered) {
  const made = element("div", "moves");
  for (const [name, label] of offered) {
    if (!(task.moves || []).includes(name)) continue;
    const button = element("button", "move", label);
    button.type = "button";
    button.dataset.move = name;
    button.addEventListener("click", () => send(task.id, name));
    made.append(button);
  }
  return made;
}
