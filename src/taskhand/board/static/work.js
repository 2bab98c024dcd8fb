// The drawer's tabs about the work: what became of each attempt (the ledger: its checks and
// the verdicts), the candidate's change file by file, and each unit with its transcript. A
// diff and a transcript are read when asked for and kept: a commit and an ended unit's
// transcript never change (a working unit's grows: it is read again at each redraw).

import { read } from "./api.js";
import { dollars, element, table } from "./dom.js";

const diffs = new Map();  // attempt id -> its change, as read
const transcripts = new Map();  // "unit:tail" -> its lines, as read
const attemptPicked = new Map();  // task id -> the attempt whose change the Diff tab shows
const unitPicked = new Map();  // task id -> the unit whose transcript the Units tab shows
const tails = new Map();  // unit id -> how many of its last lines to show
const TAIL = 200;

// A read whose refusal the tab shows in place (the page's notice is for moves).
async function quietly(path) {
  let why = "the board does not answer (fix: reload when it is back)";
  const data = await read(path, (text) => { why = text; });
  return data ? { data } : { error: why };
}

function label(attempt, attempts) {
  const runs = new Set(attempts.map((a) => a.run_id));
  return `attempt ${attempt.number}` + (runs.size > 1 ? ` of run ${attempt.run_id}` : "");
}

// Attempts: the ledger, oldest first.
export function attemptsTab(task, found) {
  return found.attempts.filter((a) => a.ledger).map((attempt) => {
    const entry = attempt.ledger;
    const made = element("article", `attempt ${entry.outcome}`);
    made.dataset.attempt = attempt.id;
    made.append(element("h3", "", `${label(attempt, found.attempts)} · ${entry.outcome.replaceAll("_", " ")}`),
      element("p", "summary", entry.summary));
    if (entry.diff_summary) made.append(element("p", "changed", entry.diff_summary));
    if (entry.gates.length) {
      made.append(table(["check", "", "what it found"], entry.gates.map((check) =>
        [check.name, element("span", check.ok ? "pass" : "fail", check.ok ? "pass" : "fail"),
          element("pre", "detail", check.detail)])));
    }
    for (const verdict of entry.verdicts) made.append(verdictNote(verdict));
    const report = entry.report || {};
    if (report.resolution) made.append(element("p", "case", `The worker's case: ${report.resolution}`));
    if (report.criteria?.length) {
      const list = element("ul", "case-criteria");
      for (const met of report.criteria) list.append(element("li", "", `${met.criterion} — ${met.evidence}`));
      made.append(list);
    }
    return made;
  });
}

function verdictNote(verdict) {
  const accepted = verdict.verdict === "accept";
  const made = element("div", `verdict ${accepted ? "accepted" : "rejected"}`);
  const says = `${verdict.lens}: ${accepted ? "accepted" : "rejected"}` +
    (verdict.category ? ` as ${verdict.category}` : "");
  made.append(element("strong", "", says));
  const facts = element("dl");
  for (const [name, text] of [["concern", verdict.concern],
    ["evidence", (verdict.evidence || []).join(", ")], ["next step", verdict.next_step]]) {
    if (text) facts.append(element("dt", "", name), element("dd", name.replace(" ", "-"), text));
  }
  made.append(facts);
  return made;
}

// Diff: the change of one attempt (the newest unless another is picked), file by file.
export async function diffTab(task, found, redraw) {
  const candidates = found.attempts.filter((a) => a.candidate_sha);
  let id = attemptPicked.get(task.id);
  if (!candidates.some((a) => a.id === id)) id = candidates.at(-1).id;
  const picker = element("div", "attempt-picker");
  for (const attempt of candidates) {
    const outcome = attempt.ledger ? attempt.ledger.outcome : attempt.status;
    const button = element("button", "pick", `${label(attempt, found.attempts)} · ${outcome.replaceAll("_", " ")}`);
    button.type = "button";
    button.dataset.attempt = attempt.id;
    button.setAttribute("aria-pressed", String(attempt.id === id));
    button.addEventListener("click", () => { attemptPicked.set(task.id, attempt.id); redraw(); });
    picker.append(button);
  }
  if (!diffs.has(id)) {
    const read = await quietly(`/api/tasks/${encodeURIComponent(task.id)}/attempts/${id}/diff`);
    if (read.error) return [picker, element("p", "empty", read.error)];
    diffs.set(id, read.data);
  }
  const diff = diffs.get(id);
  const files = diff.files.length === 1 ? "1 file" : `${diff.files.length} files`;
  const parts = [picker,
    element("p", "diff-summary", `${files} · ${diff.base.slice(0, 10)}..${diff.candidate.slice(0, 10)}`),
    ...diff.files.map(fileChange)];
  if (diff.left_out) parts.push(element("p", "note", `${diff.left_out} more files, not listed`));
  return parts;
}

function fileChange(file) {
  const made = element("section", "file");
  made.dataset.path = file.path;
  const name = element("h4", "file-name");
  name.append(element("span", "status", file.status),
    element("span", "path", file.old_path ? `${file.old_path} → ${file.path}` : file.path));
  if (!file.binary) name.append(element("span", "counts", `+${file.added} −${file.deleted}`));
  made.append(name);
  if (file.note) made.append(element("p", "note", file.note));
  if (file.header.length || file.text) {
    const lines = element("pre", "diff");
    for (const line of file.header) lines.append(element("span", "meta", line));
    if (file.text) for (const line of file.text.split("\n")) lines.append(element("span", kind(line), line));
    made.append(lines);
  }
  return made;
}

function kind(line) {
  return { "+": "add", "-": "del", "@": "hunk", "\\": "meta" }[line[0]] || "context";
}

// Units: each agent run on the task, and the transcript of the one picked.
// Parts of a unit's tokens in and out that only some agents report: [heading, key] (the
// heading kept on one line).
const PARTS = [["cache\u00a0w", "tokens_cache_write"], ["thinking", "tokens_thinking"]];
export async function unitsTab(task, found, redraw) {
  const picked = found.units.find((u) => u.id === unitPicked.get(task.id));
  // Cache writes and thinking are columns only when some unit's agent reported them.
  const parts = PARTS.filter(([, key]) => found.units.some((unit) => unit[key]));
  const shown = table(["#", "role", "agent", "model", "outcome", "time", "tokens",
    ...parts.map(([name]) => name), "$", ""],
    found.units.map((unit) => [unit.id, unit.lens ? `${unit.role} (${unit.lens})` : unit.role,
      unit.agent, unit.model || "", unit.outcome || "working", duration(unit.seconds), tokens(unit),
      ...parts.map(([, key]) => String(unit[key] || 0)),
      `${dollars(unit.cost)}${unit.cost_estimated ? " (est.)" : ""}`,
      unit.transcript ? transcriptButton(task, unit, unit === picked, redraw) : ""]));
  found.units.forEach((unit, index) => {
    const line = shown.rows[index + 1];
    line.dataset.unit = unit.id;
    line.classList.toggle("picked", unit === picked);
  });
  return picked ? [shown, await transcript(task, picked, redraw)] : [shown];
}

function transcriptButton(task, unit, open, redraw) {
  const button = element("button", "transcript", open ? "hide transcript" : "transcript");
  button.type = "button";
  button.addEventListener("click", () => {
    if (open) unitPicked.delete(task.id); else unitPicked.set(task.id, unit.id);
    redraw();
  });
  return button;
}

async function transcript(task, unit, redraw) {
  const tail = tails.get(unit.id) || TAIL;
  const key = `${unit.id}:${tail}`;
  if (!transcripts.has(key) || !unit.outcome) {
    const path = `/api/tasks/${encodeURIComponent(task.id)}/units/${unit.id}/transcript?tail=${tail}`;
    const read = await quietly(path);
    if (read.error) return element("p", "empty", read.error);
    transcripts.set(key, read.data);
  }
  const found = transcripts.get(key);
  const made = element("section", "transcript");
  made.dataset.unit = unit.id;
  made.append(element("h3", "", `Transcript of unit ${unit.id} · ${unit.role}`));
  if (found.lines.length < found.total || found.older) {
    made.append(element("p", "note", `the last ${found.lines.length} of ${found.total} lines` +
      (found.older ? " (older ones were not read)" : "")));
  }
  if (found.lines.length < found.total) {
    const more = element("button", "more", `show all ${found.total}`);
    more.type = "button";
    more.addEventListener("click", () => { tails.set(unit.id, found.total); redraw(); });
    made.append(more);
  }
  const list = element("ol", "lines");
  for (const line of found.lines) {
    const item = element("li", "line");
    item.dataset.role = line.role;
    item.append(element("span", "role", line.role || "·"), element("pre", "text", line.text));
    list.append(item);
  }
  made.append(list);
  return made;
}

function duration(seconds) {
  if (seconds === null || seconds === undefined) return "";
  if (seconds < 1) return `${Math.round(seconds * 1000)} ms`;
  if (seconds < 60) return `${seconds.toFixed(1)} s`;
  return `${Math.floor(seconds / 60)}m ${String(Math.floor(seconds % 60)).padStart(2, "0")}s`;
}

function tokens(unit) {
  const cached = unit.tokens_cached ? ` (${unit.tokens_cached} cached)` : "";
  return `${unit.tokens_in} in / ${unit.tokens_out} out${cached}`;
}
