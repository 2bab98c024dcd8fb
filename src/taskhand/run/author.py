"""`taskhand author`: an authoring unit reads requirement documents and the repository (in a
disposable copy, read-only) and returns a plan as data; the harness writes it into a temporary
folder, validates it, and sends what matters back for another round, within a cap. Only a
plan that validates is moved into place, at once. Nothing of the plan is executed.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path

from taskhand import agents, workspace
from taskhand.agents.executor import LocalExecutor
from taskhand.config import Caps
from taskhand.errors import UserError, split_fix
from taskhand.host import sandbox
from taskhand.host.secrets import Redactor
from taskhand.plan import authored, lint, validate
from taskhand.plan.formats.tasktrack_edit import now
from taskhand.plan.model import Dialect, Plan
from taskhand.plan.write import write_plan
from taskhand.prompts.author import AuthorBrief, Requirement
from taskhand.prompts.author import author as author_prompt
from taskhand.run.author_inputs import MAX_DOCUMENT_BYTES, Answer
from taskhand.unit import Case, Outcome, Question, Role, Sandbox, Unit
from taskhand.workspace import git
from taskhand.workspace.depot import Depot
from taskhand.workspace.review_copy import disposable_copy

MAX_QUESTIONS = 5  # an interview longer than this is a sign the documents are not ready
NO_QUESTIONS = (
    "questions are not taken now: make the sensible choice yourself, say so in the objective, "
    "and return the plan"
)

# Asked for question number N: the letter (and note) a person chose, or an AuthorError
# saying how to answer when nobody can be asked here.
Answerer = Callable[[int, Question], Answer]


class AuthorError(UserError):
    """An authoring that ended without a plan; the message says why and what to do."""


@dataclass
class Request:
    requirements: list[tuple[Path, Requirement]]  # absolute paths, as run.author_inputs read
    out: Path
    dialect: Dialect
    agent: str = "replay"
    model: str | None = None
    script: Path | None = None
    code: str = ""
    spec: Path | None = None
    rounds: int = 3
    ask: bool = False
    repo: Path = field(default_factory=Path.cwd)
    sandbox: str = "auto"


@dataclass
class Authored:
    plan: Plan
    files: list[Path]
    rounds: int  # plans the author returned
    interview: list[str]  # "Q1: ... -> (a) ..." lines
    report: validate.Report  # the written folder, validated: its warnings remain
    prompts: list[str] = field(default_factory=list)  # each unit's, in order


def author(request: Request, answer: Answerer, step: Callable[[str], None]) -> Authored:
    """Run the author until its plan validates, within `request.rounds` plans; write it."""
    with ExitStack() as stack:  # one place for the author's copy, removed however it ends
        return _rounds(request, answer, step, stack)


def _rounds(
    request: Request, answer: Answerer, step: Callable[[str], None], stack: ExitStack
) -> Authored:
    agent = agents.create(request.agent, request.script, request.model)
    executor = LocalExecutor({request.agent: agent})
    box, warning = sandbox.choose(request.sandbox)
    if warning:
        step(f"warning: {warning}")
    created = now()
    frame = authored.Frame(
        request.dialect,
        request.out,
        tuple(str(p) for p, _ in request.requirements),
        created,
        request.code,
    )
    brief = AuthorBrief(
        [r for _, r in request.requirements],
        request.dialect,
        "",
        ask=request.ask,
        code=request.code,
    )
    units = plans = 0
    last: list[str] = []
    prompts: list[str] = []
    place = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="taskhand-author-")))
    while plans < request.rounds:
        units += 1
        with _workspace(request.repo, place) as (folder, project, readable):
            brief = replace(brief, project=project)
            prompt = author_prompt(brief, MAX_DOCUMENT_BYTES)
            prompts.append(prompt)
            seen = box.with_readable(readable).with_hidden([request.repo])
            outcome = _unit(executor, request, seen, folder, prompt, units)
        asked = outcome.question if outcome.case is Case.QUESTION else None
        if asked is not None and request.ask and len(brief.interview) < MAX_QUESTIONS:
            number = len(brief.interview) + 1
            line = interview_line(number, asked, answer(number, asked))
            step(line)
            brief = replace(brief, interview=[*brief.interview, line])
            continue
        if outcome.case is Case.FAILED:
            raise AuthorError(f"the author gave up: {outcome.failure or 'no reason given'}")
        if outcome.case is Case.ERROR:
            raise AuthorError(
                f"the author's unit failed: {outcome.failure}",
                fix="check the agent and its model, then run the command again",
            )
        plans += 1
        if outcome.case is Case.QUESTION:
            last, sent = [NO_QUESTIONS], ""
        else:
            plan, last, errors, sent = _check(outcome.resolution, frame, request.spec)
            # At the cap, a plan with warnings alone is written: they are reported.
            if plan is not None and (not last or (plans == request.rounds and not errors)):
                step(f"round {plans}: the plan validates" + (" with warnings" if last else ""))
                written = write_plan(plan, request.out, request.spec)  # at once, or not at all
                report = lint.lint(request.out)  # its warnings are reported
                return Authored(report.require(), written, plans, brief.interview, report, prompts)
        going = "go back to the author" if plans < request.rounds else "remain"
        step(f"round {plans}: {len(last)} problem(s) {going}")
        for line in last:
            step(f"  {line}")
        brief = replace(brief, feedback=last, last_plan=sent)
    found = [split_fix(line)[0] for line in last]  # the fixes were the author's to make
    shown = "; ".join(found[:5]) + (f"; and {len(found) - 5} more" if len(found) > 5 else "")
    raise AuthorError(
        f"the author's plan had errors after {request.rounds} round(s): {shown}",
        fix="run again with more --rounds, or make the requirement documents more precise",
    )


def interview_line(number: int, question: Question, given: Answer) -> str:
    """The answered question as the author's next round reads it, options lettered."""
    index = ord(given.choice[:1] or "?") - ord("a")
    chosen = option_line(question, index) if 0 <= index < len(question.options) else given.choice
    return f"Q{number}: {question.text} -> {' '.join(x for x in (chosen, given.note) if x)}"


def option_line(question: Question, index: int) -> str:
    """An option lettered as the lifecycle's interview letters it, the first recommended."""
    option = question.options[index]
    recommended = index == 0 and "recommended" not in option.lower()
    return f"({chr(ord('a') + index)}) {option}" + (" — recommended" if recommended else "")


def _check(
    resolution: str, frame: authored.Frame, spec: Path | None
) -> tuple[Plan | None, list[str], bool, str]:
    """The author's plan; what goes back to the author about it, one line each (nothing when
    it passes every check) and whether any of it is an error; and the plan as it was sent.
    The plan is written into a temporary folder and checked there."""
    try:
        data = json.loads(resolution)
    except ValueError:
        return None, ["the resolution must be the plan as one JSON object"], True, resolution
    sent = json.dumps(data, indent=1)
    plan, wrong = authored.build_all(data, frame)  # the data's problems, and what is usable
    if plan is None:
        return None, wrong, True, sent
    with tempfile.TemporaryDirectory(prefix="taskhand-author-") as tmp:
        folder = Path(tmp) / "plan"
        write_plan(replace(plan, root=folder), folder, spec)
        report = lint.lint(folder)
        lost = authored.differences(plan, report.plan) if report.plan is not None else []
        found = lint.to_fix(report)
    return (
        plan,
        [*wrong, *lost, *(f.text for f in found)],
        bool(wrong) or bool(lost) or any(f.is_error for f in found),
        sent,
    )


def _unit(
    executor: LocalExecutor, request: Request, box: Sandbox, folder: Path, prompt: str, n: int
) -> Outcome:
    redact = Redactor()
    unit = Unit(
        Role.AUTHOR, "author", 1, redact(prompt), folder, Caps().unit_seconds, request.model
    )
    unit.sandbox, unit.round = box, n
    outcome = executor.run(request.agent, unit)
    outcome.resolution = redact(outcome.resolution)
    return outcome


@contextmanager
def _workspace(repo: Path, place: Path) -> Iterator[tuple[Path, str, list[Path]]]:
    """Where the author works, in `place`: a copy of the repository's last commit, wiped after
    each unit and reused by the next (the checkout itself is watched: a change to it ends the
    authoring), or an empty folder when there is no commit to copy."""
    try:
        root = git.find_repo(repo)
        ready = git.has_commits(root)
    except git.GitError:
        ready = False
    if not ready:
        empty = place / "empty"
        workspace.remove(empty)
        empty.mkdir()
        yield empty, "There is no code yet: the workspace is empty.", []
        return
    depot = Depot.open(root, place / "depot")  # checks the copy out byte for byte
    with disposable_copy(depot, "HEAD", place / "copy", place / "index", root) as copy:
        # The copy reads the repository's objects, which the sandbox must let it see.
        readable = [*git.object_folders(root), depot.objects]
        yield copy.path, "The workspace holds the project at its last commit.", readable
    if copy.violations:
        raise AuthorError(
            "the author changed your checkout: " + ", ".join(copy.violations[:10]),
            fix="look at what changed and undo it; run with --sandbox bwrap",
        )
