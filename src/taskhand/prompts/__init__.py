"""Prompts per role, built from the Markdown templates beside this file.

The visibility wall: an agent sees the task, the overview and the plan as context, the
project's conventions, and its own task's ledger; never the harness's state, its file names,
the queue, the caps or the costs. Each context source is cut to its cap (`PromptCaps`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from string import Template

from taskhand.config import PromptCaps
from taskhand.gates import GateResult
from taskhand.plan.model import Exchange, Plan, Status, Task
from taskhand.state.ledger import LedgerEntry, LedgerOutcome
from taskhand.state.progress import Note, Outcome
from taskhand.text import cap, printable
from taskhand.unit import CaseReport
from taskhand.workspace.diffs import Change

CONTEXT_FILES = ("AGENTS.md", "CLAUDE.md")  # the project's conventions, read at the task's base
LISTED_FILES = 1000  # a change of more files than this is listed in part, with the count

LENS_FOCUS = {
    "general": "Judge the whole change against the task.",
    "correctness": "Focus on correctness: does the code do what each criterion says, on edge "
    "cases and error paths too? Leave style to others.",
    "tests": "Focus on the tests: do they exercise the behaviour the criteria describe, and "
    "would they fail if it broke? Name weak or missing assertions.",
    "security": "Focus on security: injection, unsafe file or process handling, secrets in "
    "code or logs, missing validation of untrusted input.",
    "maintainability": "Focus on maintainability: clear names, no duplication or dead code, "
    "changes that fit the project's structure and conventions.",
    "documentation": "Focus on documentation: are user-visible changes described where users "
    "look (README, docs, help text), and accurately?",
}


# How an earlier attempt's outcome reads in a prompt; the others read as their summary says.
OUTCOME_WORDS = {
    LedgerOutcome.ACCEPTED: LedgerOutcome.ACCEPTED.value,
    LedgerOutcome.REJECTED: "rejected by the reviewer",
    LedgerOutcome.CHECKS_FAILED: "the checks failed",
    LedgerOutcome.NO_CHANGES: "it changed no files",
}


# How each line of the progress channel reads. Only a done task's line has words of its own
# (the worker's account): a failure's reason and a wait's request are the harness's.
PROGRESS_WORDS = {
    Outcome.DONE: "done",
    Outcome.WAITING: "waiting for a person",
    Outcome.FAILED: "not finished; its work is not in the project",
}
PROGRESS_GUIDE = (
    "Earlier tasks of this plan, as each last ended, oldest first. Build on what they did; do "
    "not redo it."
)


def progress_lines(notes: list[Note]) -> str:
    """The progress channel's notes as the worker reads them, one line each."""
    lines = []
    for note in notes:
        line = f"- {note.task_id} {note.title}: {PROGRESS_WORDS[note.outcome]}"
        if note.outcome is Outcome.DONE and note.resolution:
            line += f": {note.resolution}"
        lines.append(line)
    return "\n".join(lines)


@dataclass(frozen=True)
class Candidate:
    """What a reviewer judges: the worker's case, the machine checks and the change."""

    resolution: str
    report: CaseReport
    gates: list[GateResult]
    changes: list[Change]
    patch: str
    summary: str = ""


@dataclass(frozen=True)
class Context:
    """What every prompt for one task may show besides the task itself."""

    plan: Plan
    statuses: dict[str, Status]
    conventions: str  # AGENTS.md / CLAUDE.md, already capped
    ledger: list[LedgerEntry] = field(default_factory=list)  # this task's, oldest first
    caps: PromptCaps = field(default_factory=PromptCaps)
    progress: str = ""  # what earlier tasks did: the progress channel's lines, already shown


@dataclass(frozen=True)
class Brief:
    """What the lifecycle has written for a task so far, as the next role reads it."""

    spec: str = ""
    plan: str = ""
    code_map: str = ""  # the explorer's, for the planner
    interview: list[str] = field(default_factory=list)  # "Q1 ... -> answer" lines
    remarks: list[str] = field(default_factory=list)  # a person's words, newest last
    verdict: str = ""  # the newest qa or judge rejection, word for word
    browser: str = ""  # how to reach the app, when the role has a browser
    last_round: str = ""  # the rejected round's change, which the workspace holds

    def sections(self, *names: str) -> str:
        shown = {
            "spec": _section("The spec (approved contract)", self.spec),
            "plan": _section("The plan", self.plan),
            "map": _section("The explorer's map of the code", self.code_map),
            "interview": _section(
                "A person's answers to earlier questions", "\n".join(self.interview)
            ),
            "remarks": _section(
                "What a person said about this task (word for word, newest last)",
                "\n".join(f"- {r}" for r in self.remarks),
            ),
            "verdict": _section("The newest rejection (fix exactly this)", self.verdict),
            "browser": _section("The browser", self.browser),
            "last_round": _section(
                "The change of your last round (the workspace holds it; fix it, do not redo it)",
                _fenced(self.last_round, "diff") if self.last_round else "",
            ),
        }
        return "".join(shown[n] for n in names)


def _template(name: str) -> Template:
    return Template(files(__package__).joinpath(f"{name}.md").read_text(encoding="utf-8"))


def conventions(worktree: Path, limit: int) -> str:
    """The project's AGENTS.md and CLAUDE.md at the workspace root, together cut to `limit`.

    Only regular files count: a link could point anywhere on this machine.
    """
    found = []
    for name in CONTEXT_FILES:
        path = worktree / name
        if path.is_symlink() or not path.is_file():
            continue
        with path.open("rb") as handle:
            text = handle.read(limit + 1).decode("utf-8", "replace").strip()
        if text:
            found.append((name, text))
    if len(found) == 1:
        return cap(found[0][1], limit)
    return cap("\n\n".join(f"### {name}\n\n{text}" for name, text in found), limit)


def plan_context(plan: Plan, current: str, statuses: dict[str, Status], limit: int) -> str:
    """The plan's tasks, then where each stands, each cut to `limit`. The list is the same in
    every prompt of a run, so a provider's prompt cache serves it; the statuses, which move,
    come after it."""
    lines = []
    by_status: dict[str, list[str]] = {}
    for task in plan.tasks:
        summary = " ".join(task.description.split())[:160]
        lines.append(f"- {task.id} {task.title}: {summary}")
        shown = task.id + (" (this task)" if task.id == current else "")
        by_status.setdefault(statuses.get(task.id, task.status).lower(), []).append(shown)
    where = "; ".join(f"{status}: {', '.join(ids)}" for status, ids in by_status.items())
    listed, standing = "\n".join(lines), f"Where the tasks stand: {where}."
    return f"{cap(listed, limit)}\n\n{cap(standing, limit)}"


def worker(
    task: Task, context: Context, building_on: int | None = None, brief: Brief | None = None
) -> str:
    """The implementer's prompt for one attempt at `task`; `building_on` is the number of
    the earlier attempt whose changes the workspace starts from, if any; `brief` what the
    full lifecycle wrote before it (spec, plan, a person's words, the newest rejection)."""
    caps, plan = context.caps, context.plan
    ledger = _ledger(
        context.ledger[-caps.ledger_entries :],
        "## Earlier attempts at this task",
        "A reviewer and the project's checks looked at your earlier attempts. Fix what they "
        "found; do not start over unless they ask for it.",
    )
    if building_on is not None:
        ledger += (
            f"\nThe workspace already holds the changes of attempt {building_on}; build on them.\n"
        )
    shared = _shared(task, context)
    if brief is not None:  # the full lifecycle's interview is in the brief, not the fields
        shared["exchanges"] = ""
    return _template("implement").substitute(
        **shared,
        plan=plan_context(plan, task.id, context.statuses, caps.plan_bytes),
        ledger=ledger,
        scope=f"\nStay inside these paths: {', '.join(task.paths)}.\n" if task.paths else "",
        brief=(brief or Brief()).sections(
            "spec", "plan", "interview", "remarks", "verdict", "last_round"
        ),
        progress=_section(
            "What earlier tasks did",
            context.progress and f"{PROGRESS_GUIDE}\n\n{context.progress}",
        ),
    )


def evaluator(task: Task, context: Context, candidate: Candidate, lens: str = "general") -> str:
    """The reviewer's prompt: the task, the case, the checks and the change, judged through
    `lens`, with its own earlier verdicts on this task."""
    caps, plan = context.caps, context.plan
    # Every task, this one too: the list is then the same in each review of the run.
    others = "\n".join(f"- {t.id}: {t.title}" for t in plan.tasks)
    ledger = _ledger(
        context.ledger[-caps.ledger_entries :],
        "## Your earlier verdicts on this task",
        "These are your own verdicts on earlier attempts, oldest first. Judge the change as it "
        "is now: confirm what was fixed rather than argue it again, and when the same problem "
        "recurs, say more concretely what to change.",
    )
    return _template("evaluate").substitute(
        **_shared(task, context),
        focus=LENS_FOCUS[lens],
        others=cap(others, caps.plan_bytes) or "(none)",
        case=_case(candidate),
        gates=_gates(candidate.gates),
        count="1 file" if len(candidate.changes) == 1 else f"{len(candidate.changes)} files",
        files=_files(candidate.changes),
        diff=_fenced(cap(candidate.patch, caps.diff_bytes), "diff"),
        ledger=ledger,
    )


def _shared(task: Task, context: Context) -> dict[str, str]:
    """What both roles' prompts show the same way: the overview, the conventions, the task."""
    plan = context.plan
    return {
        "overview": cap(plan.overview_text or plan.objective, context.caps.overview_bytes),
        "conventions": _section("Project conventions", context.conventions),
        "task_id": task.id,
        "title": task.title,
        "description": task.description,
        "criteria": _criteria(task),
        "exchanges": _exchanges(task.exchanges),
    }


def _section(title: str, body: str) -> str:
    return f"\n## {title}\n\n{body}\n" if body.strip() else ""


def _criteria(task: Task) -> str:
    return "\n".join(f"- {c.text}" for c in task.criteria) or "- (none given)"


def _exchanges(exchanges: list[Exchange]) -> str:
    answered = [e for e in exchanges if e.response]
    if not answered:
        return ""
    pairs = "\n".join(f"- Asked: {e.request}\n  Answer: {e.response}" for e in answered)
    return f"\nA person answered earlier questions on this task:\n{pairs}\n"


def _case(candidate: Candidate) -> str:
    lines = [f"Summary: {candidate.resolution.strip() or '(none given)'}"]
    report = candidate.report
    if report.criteria:
        lines += ["", "How each criterion is met (the worker's claim; verify it):"]
        lines += [f"- {e.criterion} -> {e.evidence}" for e in report.criteria]
    if report.workarounds:
        lines += ["", "Work-arounds it made (weigh each one):"]
        lines += [f"- {w}" for w in report.workarounds]
    if report.uncertainties:
        lines += ["", "What it is unsure of:"]
        lines += [f"- {u}" for u in report.uncertainties]
    return "\n".join(lines)


def _gates(gates: list[GateResult]) -> str:
    if not gates:
        return "(no checks ran)"
    return "\n".join(f"- {g.name}: {'passed' if g.ok else 'FAILED'}: {g.detail}" for g in gates)


def _files(changes: list[Change]) -> str:
    lines = [
        f"- {c.status} {_name(c.old_path)} -> {_name(c.path)}"
        if c.old_path
        else f"- {c.status} {_name(c.path)}"
        for c in changes[:LISTED_FILES]
    ]
    if len(changes) > LISTED_FILES:
        lines.append(f"- ... and {len(changes) - LISTED_FILES} more")
    return "\n".join(lines)


def _name(path: str) -> str:
    """A changed path as the reviewer reads it: one way only, on one line."""
    return printable(path, name=True)


def _fenced(text: str, language: str) -> str:
    """`text` in a code fence longer than any run of backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def _ledger(entries: list[LedgerEntry], title: str, guide: str) -> str:
    if not entries:
        return ""
    lines = [f"\n{title}\n", guide, ""]
    for n, entry in enumerate(entries, start=1):
        lines.append(f"{n}. Attempt {entry.iteration}: {_outcome(entry)}")
        for verdict in entry.rejections:
            line = verdict.line()
            lines.append(f"   {line[0].upper()}{line[1:]}")
            for label, text in verdict.details():
                lines.append(f"   {label.capitalize()}: {text}")
        for check in entry.failed_checks:
            detail = "\n     ".join(check.detail.splitlines())
            lines.append(f"   Check {check.name} failed: {detail}")
        if entry.diff_summary:
            lines.append(f"   Change then: {entry.diff_summary}")
    return "\n".join(lines) + "\n"


def _outcome(entry: LedgerEntry) -> str:
    return OUTCOME_WORDS.get(entry.outcome, entry.summary)
