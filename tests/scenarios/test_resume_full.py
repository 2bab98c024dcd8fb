"""Crash safety of the full pipeline: a runner killed with SIGKILL in every stage of the
lifecycle (each role's unit, each move, between a stage's writes, at a person's gate, inside
delivery) resumes to the same result, with nothing asked, written, integrated or opened twice.

The campaigns reuse tests/scenarios/test_resume.py's machinery: a real child process
(crashing_run.py, with the plan's own taskhand.toml) that kills itself at a chosen point.
The plans are tests/scenarios/full_plans.py's: a ui task that qa rejects once, then a logic
task that the judge rejects once; the gated variant asks a question and stops at every gate,
where a person answers, approves and accepts with the move commands (run/moves.py). Inside
delivery, the remote is a bare repository on disk and gh the stand-in that records its calls.

Kill points are random where not chosen: set TASKHAND_TEST_SEED to replay a failure; every
assertion message names the seed.
"""

from __future__ import annotations

import os
import random
import subprocess
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest

from taskhand import config as runconfig
from taskhand.config import Flags
from taskhand.pipeline.lifecycle import plan_key
from taskhand.plan.formats.prose import normal
from taskhand.plan.model import Status
from taskhand.plan.validate import validate
from taskhand.run import launch, moves
from taskhand.run.preflight import load
from taskhand.state.documents import Documents
from taskhand.state.events import Event
from taskhand.state.life import Lifecycle
from taskhand.state.paths import StateDir
from taskhand.state.records import Attempt, AttemptStatus, Run
from taskhand.state.status import StatusBook
from taskhand.state.store import Store
from taskhand.workspace import worktrees
from taskhand.workspace.snapshot import snapshot
from tests.delivery.remotes import with_remote
from tests.scenarios.full_plans import QUESTION, SVG, WIREFRAME, FullPlan, build_full
from tests.scenarios.test_resume import Campaign, tree_files

L = Lifecycle
DIALECTS = ["markdown", "tasktrack"]
# Attempts end in these only: a kill leaves an attempt interrupted, a gate awaiting, a
# question asking; none fails (nothing in these scripts fails its checks).
ENDS = {"passed", "rejected", "interrupted", "awaiting", "question"}
# How many events a resumed process may emit fewer than an uninterrupted run from the same
# task on: the units of the stages it does not redo (their documents are written, the
# lifecycle moved on).
MARGIN = 30
KILLS = int(os.environ.get("TASKHAND_TEST_KILLS", "10"))  # per random campaign
HARNESS_FIELDS = ("**Status**", "**Updated**", "**Request**", "**Response**", "**Resolution**")


@dataclass
class FullCampaign(Campaign):
    """A campaign over a full-pipeline plan, started with the plan's own settings."""

    built: FullPlan | None = None
    trail: list[str] = field(default_factory=list)  # kills and a person's moves, in order
    flags: ClassVar[tuple[str, ...]] = ("--settings",)

    def __post_init__(self) -> None:
        super().__post_init__()
        self.plan_files = {p.name: p.read_text(encoding="utf-8") for p in self.plan.iterdir()}
        self.descriptions = {t.id: t.description for t in load(self.plan).tasks}

    @classmethod
    def of(cls, name: str, built: FullPlan, seed: int, logs: Path) -> FullCampaign:
        return cls(name, built.repo, built.plan, built.script, seed, logs, built=built)

    def where(self) -> str:
        return (
            f"[seed {self.seed} (TASKHAND_TEST_SEED), {self.name}, round {self.rounds}, "
            f"{len(self.kills)} kills; after each kill (and a person's moves): {self.trail}]"
        )

    def killed(self, after: int) -> list[Event]:
        events = super().killed(after)
        self.trail.append(self.kills[-1])
        return events

    @property
    def fp(self) -> FullPlan:
        assert self.built is not None
        return self.built

    def open_store(self) -> Store:
        return Store.open(StateDir.for_repo(self.repo).database)

    def run_now(self) -> Run:
        with self.open_store() as store:
            run = store.latest_run()
        assert run is not None, self.where()
        return run

    def life(self, task_id: str) -> Any:
        with self.open_store() as store:
            return store.life(str(self.plan.resolve()), task_id)

    def roles_run(self, task_id: str) -> list[str]:
        """The roles of the task's units that ran to an outcome, in order."""
        with self.open_store() as store:
            return [str(u.role) for u in store.units(self.run_now().id, task_id) if u.outcome]

    def dialect_status(self, task_id: str) -> Status:
        plan = load(self.plan)
        with self.open_store() as store:
            return StatusBook(plan, store, self.run_now().id).statuses()[task_id]


# -- a person, through the store ---------------------------------------------------------------


def person(c: FullCampaign) -> list[str]:
    """A person's move on every task that waits for one, made as `taskhand answer`, `approve`
    and `accept` make it: the open question answered with its recommended option, the plan
    approved, the prototype accepted. No run holds the plan (a kill, or a run that ended), so
    no move is refused; a task a kill left BUSY stays BUSY, its stage under way."""
    plan = load(c.plan)
    key = plan_key(plan)
    with c.open_store() as store:
        lives = store.lives(key)
        asked = {t: [q for q in store.questions(key, t) if q.open] for t in lives}
    made = []
    for task in plan.tasks:
        life = lives.get(task.id)
        if life is None or not life.waiting:
            continue
        if life.status is L.NEEDS_INPUT:
            assert asked[task.id], f"{c.where()}: {task.id} needs input, but no question is open"
            for q in asked[task.id]:
                moved = moves.answer(task.id, f"Q{q.number}", "a", "", c.plan, c.repo)
        elif life.status is L.PLANNED:
            moved = moves.approve(task.id, c.plan, c.repo)
        elif life.status is L.PROTOTYPE:
            moved = moves.accept(task.id, c.plan, c.repo)
        else:
            raise AssertionError(f"{c.where()}: {task.id} stopped at {life.status}: {life.reason}")
        assert not moved.waiting, f"{c.where()}: {moved}"
        made.append(f"{task.id}: {moved.move} {moved.before} -> {moved.after} ({moved.status})")
    c.trail.append(f"a person: {'; '.join(made) or 'nothing to do'}")
    return made


def finish(c: FullCampaign) -> None:
    """Rounds without kills, a person acting between them, until the run completes."""
    for _ in range(8):
        if c.status() == "completed":
            return
        assert not c.round(None), c.where()
        if c.status() == "waiting":
            assert person(c), f"{c.where()}: the run waits, but no task waits for a person"
    raise AssertionError(f"{c.where()}: the run did not complete: {c.status()}")


# -- what must hold at the end -----------------------------------------------------------------


def verify(c: FullCampaign) -> None:
    """Everything the campaign must leave, however often it was killed."""
    where, fp = c.where(), c.fp
    state = StateDir.for_repo(c.repo)
    key = str(c.plan.resolve())
    with c.open_store() as store:
        runs = store.runs()
        assert len(runs) == 1, f"{where}: a restart began another run: {[r.id for r in runs]}"
        run = runs[0]
        states = store.task_states(run.id)
        attempts = store.attempts(run.id)
        events = store.events(run.id)
        lives = store.lives(key)
        questions = {t: store.questions(key, t) for t in fp.ids}
        requests = store.requests(run.id)
    assert run.status == "completed", f"{where}: the run is {run.status}: {run.reason}"
    assert {t: s.status for t, s in states.items()} == dict.fromkeys(fp.ids, Status.DONE), where
    final = L.DELIVERED if fp.delivers else L.DONE
    assert {t: (life.status, life.waiting) for t, life in lives.items()} == dict.fromkeys(
        fp.ids, (final, False)
    ), f"{where}: lifecycles {lives}"

    # Each task integrated once; attempts end only as the pipeline ends them.
    integrated = Counter(e.task_id for e in events if e.kind == "integrated")
    assert integrated == Counter(fp.ids), f"{where}: 'integrated' events per task: {integrated}"
    passed = {a.task_id: a for a in attempts if a.status == "passed"}
    assert Counter(a.task_id for a in attempts if a.status == "passed") == Counter(fp.ids), where
    ends = Counter(str(a.status) for a in attempts)
    assert set(ends) <= ENDS, f"{where}: attempt ends {ends}"
    # An attempt open at a kill ends interrupted, or, when it had asked its question (the
    # kill came after the question was recorded), as a question: it is not redone.
    interrupted = {a.id for a in attempts if a.status == "interrupted"}
    questioned = {a.id for a in attempts if a.status == "question"}
    assert interrupted <= c.interrupted <= interrupted | questioned, (
        f"{where}: interrupted {sorted(interrupted)}, open at a kill {sorted(c.interrupted)}"
    )

    # One commit per task on the run branch, in order, each the accepted candidate, holding
    # what the scripts wrote in the attempts it was built of.
    base, branch = run.base_sha, run.run_branch
    log = _git(c.repo, "log", "--reverse", "--format=%H %P%x09%s", f"{base}..{branch}")
    rows = [line.split("\t", 1) for line in log.splitlines()]
    assert [s for _, s in rows] == [f"{t}: {title}" for t, title in c.tasks], f"{where}: {rows}"
    shas = [s.split() for s, _ in rows]
    assert [s[0] for s in shas] == [passed[t].candidate_sha for t in fp.ids], where
    assert [s[1:] for s in shas] == [[base], [shas[0][0]]], f"{where}: {shas}"
    expected, resolutions = expected_tree(c, base, attempts, events)
    if fp.delivers:
        resolutions = {t: f"{r} (delivered: {lives[t].pr})" for t, r in resolutions.items()}
    assert tree_files(c.repo, branch) == expected, f"{where}: the run branch's files"
    assert {t: states[t].reason for t in fp.ids} == resolutions, f"{where}: {states}"

    # The interview: each question asked once, answered, and shown once. (A kill between
    # the writer's unit and the question's record loses the question: the next writer's
    # unit may ask it again, or, as this script's next round does, write the spec.)
    asked = Counter((e.task_id, e.data["text"]) for e in events if e.kind == "question_asked")
    assert max(asked.values(), default=0) <= 1, f"{where}: asked twice: {asked}"
    shown = {t: [(q.number, q.text, q.open) for q in qs] for t, qs in questions.items()}
    once = [(1, QUESTION, False)]
    assert shown[fp.ui] in ([once, []] if fp.asks else [[]]), f"{where}: questions {shown}"
    assert shown[fp.logic] == [], f"{where}: questions {shown}"
    for task_id, exchanges in requests.items():  # a conclusion's request, each once
        texts = [x.request for x in exchanges]
        assert len(texts) == len(set(texts)), f"{where}: {task_id} asked twice: {texts}"

    # The documents, where the dialect keeps them, each once and as scripted.
    artifacts = {t: state.artifacts(c.plan, t) for t in fp.ids}
    assert (artifacts[fp.ui] / "prototype.svg").read_text(encoding="utf-8") == SVG, where
    assert (artifacts[fp.ui] / "prototype-wireframe.svg").read_text(encoding="utf-8") == WIREFRAME
    assert not list(artifacts[fp.logic].glob("prototype*")), where
    if fp.dialect == "markdown":
        verify_markdown_files(c, {t for t, qs in questions.items() if qs})
    else:
        verify_tasktrack_files(c, resolutions)
        for task_id in fp.ids:
            for name, text in (("spec", fp.spec(task_id)), ("plan", fp.planned(task_id))):
                got = (artifacts[task_id] / f"{name}.md").read_text(encoding="utf-8")
                assert got == text + "\n", f"{where}: {task_id}'s {name}.md:\n{got}"

    # No worktree, no review copy, and no workspace but those of attempts that ended (kept
    # for `clean`, run/retention.py).
    trees = worktrees.listed(c.repo)
    assert [t.path.resolve() for t in trees] == [c.repo.resolve()], f"{where}: {trees}"
    folder = state.run_dir(run.id) / "worktrees"
    ended = {Path(a.worktree) for a in attempts if a.status != "interrupted"}
    left = sorted([*folder.glob("*/attempt-*"), *folder.glob("review-*")])
    assert [f for f in left if f not in ended] == [], f"{where}: left on disk: {left}"

    # The progress channel: one whole line per logged conclusion, in order, none twice.
    channel = state.progress(c.plan).read_text(encoding="utf-8")
    keys = [line.split("\t", 1)[0] for line in channel.splitlines()]
    concluded = [f"{run.id}/{e.id}" for e in events if e.kind == "task_concluded"]
    assert channel.endswith("\n") and keys == concluded, f"{where}: progress {keys}, {concluded}"

    checkout_kept(c)
    print(where)


def expected_tree(
    c: FullCampaign, base: str, attempts: list[Attempt], events: list[Event]
) -> tuple[dict[str, str], dict[str, str]]:
    """The base tree with, per task, the tester's files and the implementer's work of each
    attempt its passing one was built of (a rejected attempt's next builds on it); and each
    task's resolution, the passing attempt's. Which attempts these are, the store says: an
    attempt a kill cut short is redone, and the one after builds on it or not."""
    files = tree_files(c.repo, base)
    starts = {
        (e.task_id, e.data["attempt"]): str(e.data["start"])
        for e in events
        if e.kind == "attempt_started"
    }
    scripted, roles = c.fp.tasks(), c.fp.roles()
    resolutions = {}
    for task_id in c.fp.ids:
        own = [a for a in attempts if a.task_id == task_id]
        tries = {
            a.id: 1 + sum(b.status != AttemptStatus.INTERRUPTED for b in own if b.id < a.id)
            for a in own
        }
        by_candidate = {a.candidate_sha: a for a in own if a.candidate_sha}
        [last] = [a for a in own if a.status == AttemptStatus.PASSED]
        chain = [last]
        while starts[(task_id, chain[0].number)] != chain[0].base_sha:
            chain.insert(0, by_candidate[starts[(task_id, chain[0].number)]])
        entries = scripted[task_id]
        actions = [*roles[task_id]["tester"][-1]["actions"]]
        for attempt in chain:
            actions += entries[min(tries[attempt.id], len(entries)) - 1]["actions"]
        for action in actions:
            if "write" in action:
                files[action["write"]] = action["text"]
            else:
                files[action["edit"]] = files[action["edit"]].replace(action["old"], action["new"])
        resolutions[task_id] = entries[min(tries[last.id], len(entries)) - 1]["resolution"]
    return files, resolutions


def verify_markdown_files(c: FullCampaign, asked: set[str]) -> None:
    """Each task file is the person's text with the harness's sections after it: one Spec,
    one Plan, one Questions when `asked` holds the task, as scripted, and no paragraph twice."""
    where, fp = c.where(), c.fp
    plan = validate(c.plan)
    assert plan.ok and plan.plan is not None, f"{where}: {plan.problems}"
    for task in plan.plan.tasks:
        assert task.source is not None
        text = task.source.read_text(encoding="utf-8")
        original = c.plan_files[task.source.name].rstrip("\n")
        if task.pr is not None:  # delivered: its address in the front matter, once
            assert task.pr.startswith("https://"), f"{where}: {task.id}:\n{text}"
            original = original.replace("\n---\n", f"\npr: {task.pr}\n---\n", 1)
        assert text.startswith(original + "\n\n## "), f"{where}: {task.id}:\n{text}"
        headings = Counter(line for line in text.splitlines() if line.startswith("## "))
        added = Counter(
            line for line in text[len(original) :].splitlines() if line.startswith("## ")
        )
        assert added == Counter(
            {
                "## Spec": 1,
                "## Plan": 1,
                **({"## Questions": 1} if task.id in asked else {}),
            }
        ), f"{where}: {task.id}'s sections {headings}:\n{text}"
        # A document reads back as it was written, its own `## ` headings and all.
        assert task.documents["spec"] == normal(fp.spec(task.id)), f"{where}:\n{text}"
        assert task.documents["plan"] == normal(fp.planned(task.id)), f"{where}:\n{text}"
        assert task.description == c.descriptions[task.id], f"{where}:\n{text}"
        paragraphs = Counter(p.strip() for p in text.split("\n\n") if p.strip())
        twice = [p for p, n in paragraphs.items() if n > 1]
        assert not twice, f"{where}: {task.id} says twice: {twice}"
        if task.id in asked:
            assert text.count(f"### Q1 · {QUESTION} · answered") == 1, f"{where}:\n{text}"
            assert "### Q2" not in text and "· open" not in text, f"{where}:\n{text}"
    for name in ("overview.md", "taskhand.toml"):
        assert (c.plan / name).read_text(encoding="utf-8") == c.plan_files[name], where


def verify_tasktrack_files(c: FullCampaign, resolutions: dict[str, str]) -> None:
    """Each task file DONE with one Resolution, the overview [DONE]; the plan conformant;
    nothing but the fields a processing run (and a person's Response) may write changed."""
    where = c.where()
    report = validate(c.plan)
    assert report.ok, f"{where}: {report.problems}"
    overview = (c.plan / "FOO-TaskTrack.md").read_text(encoding="utf-8")
    for task_id, title in c.tasks:
        text = (c.plan / f"{task_id}.md").read_text(encoding="utf-8")
        assert "**Status**: DONE\n" in text, f"{where}: {task_id}.md:\n{text}"
        resolution = f"**Resolution**: {resolutions[task_id]}\n"
        assert text.count("**Resolution**:") == 1 and resolution in text, f"{where}:\n{text}"
        assert "**Failure**" not in text and "BUSY" not in text, f"{where}:\n{text}"
        requests = [line for line in text.splitlines() if line.startswith("**Request**")]
        assert len(requests) == len(set(requests)), f"{where}: a request twice:\n{text}"
        assert text.count("**Request**: Q1:") <= 1 and "Q2:" not in text, f"{where}:\n{text}"
        assert _without_fields(text) == _without_fields(c.plan_files[f"{task_id}.md"]), where
        assert f"* [DONE] {task_id}: {title}\n" in overview, f"{where}:\n{overview}"
    assert "BUSY" not in overview and "OPEN" not in overview, f"{where}:\n{overview}"
    assert sorted(p.name for p in c.plan.iterdir()) == sorted(c.plan_files), where
    for name in ("TaskTrack-v1.md", "taskhand.toml"):
        assert (c.plan / name).read_text(encoding="utf-8") == c.plan_files[name], where


def _without_fields(text: str) -> list[str]:
    paragraphs = [p.strip() for p in text.split("\n\n")]
    return [p for p in paragraphs if p and not p.startswith(HARNESS_FIELDS)]


def checkout_kept(c: FullCampaign) -> None:
    """The user's checkout as it was, but the plan's task files the harness writes (a
    Markdown plan's sections; a TaskTrack plan lies outside it)."""
    now, before = snapshot(c.repo), c.before
    written = sorted(
        f"plan/{name}" for name in c.plan_files if name.startswith("T-") and c.plan.parent == c.repo
    )
    assert isinstance(now["files"], dict) and isinstance(before["files"], dict)
    assert {k: v for k, v in now["files"].items() if k not in written} == {
        k: v for k, v in before["files"].items() if k not in written
    }, f"{c.where()}: the checkout's files changed"
    status = sorted(filter(None, str(now["status"]).split("\0")))
    assert status == sorted(f" M {name}" for name in written), f"{c.where()}: {status}"
    for part in ("head", "branch", "index", "stash"):
        assert now[part] == before[part], f"{c.where()}: the checkout's {part} changed"


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    )
    return done.stdout


# -- 1. a kill in every stage ------------------------------------------------------------------

WRITE = "call:taskhand.state.documents:Documents.write"
SET_LIFE = "call:taskhand.state.lifecycle:LifecycleRows.set_life"
# Each kill comes at the first matching point of the next process, so the list follows the
# run: the ui task through every role and move, its first candidate rejected by qa, then the
# logic task. After attempt_rejected, the attempts that build on the rejected one are killed.
UI_TASK = [
    "event:unit_started:writer",
    "event:unit_finished:writer",
    WRITE,  # the spec written, the task not yet moved on
    "event:task_moved:spec>plan",
    "event:unit_started:explorer",
    "event:unit_finished:explorer",
    "event:unit_started:planner",
    "event:unit_finished:planner",
    WRITE,  # the plan written, the task not yet moved on
    "event:task_moved:plan>prototype",
    "event:unit_started:designer",
    "event:unit_finished:designer",
    # The next process: its attempt's workspace, the designer's copy, the picture kept.
    "call:shutil:copyfile#3",
    "event:task_moved:prototype>ready",
    "event:task_moved:ready>implementing",
    "event:unit_started:tester",
    "event:unit_finished:tester",
    "event:unit_started:implementer",
    "event:unit_finished:implementer",
    "event:gate#2",
    "event:task_moved:implementing>qa",
    "event:unit_started:qa",
    "event:attempt_rejected",  # qa's rejection recorded: the next attempt builds on it
    "event:unit_started:implementer",
    "event:unit_finished:implementer",
    "event:unit_started:qa",
    "event:unit_finished:qa",
    "event:task_moved:qa>judge",
    "event:unit_started:judge",
    "event:unit_finished:judge",
    "event:integrated",
    "event:task_moved:judge>done",
    "event:step:STEP: Complete",
]
LOGIC_TASK = [
    f"{SET_LIFE}#1",  # the logic task's first record: at spec, before its writer
    "event:task_moved:spec>plan",
    f"{SET_LIFE}#1",  # plan -> ready, its task_moved event not yet logged
    "event:task_moved:ready>implementing",
    "event:unit_started:judge",  # the judge's first round, not yet given
    "event:task_moved:judge>implementing",  # the judge's rejection, not yet recorded
    "event:task_concluded",
    "event:step:EXIT",
]
POINTS = {
    "markdown": UI_TASK + LOGIC_TASK,
    # TaskTrack: fewer of the same (the roles' units are the same), and the points where
    # only this dialect writes (the overview's and the task file's status).
    "tasktrack": [
        "event:unit_finished:writer",
        WRITE,  # the spec's artifact written, the task not yet moved on
        "event:unit_finished:planner",
        WRITE,  # the plan's
        "event:task_moved:plan>prototype",
        "event:unit_finished:designer",
        "call:shutil:copyfile#3",
        "event:task_moved:implementing>qa",
        "event:attempt_rejected",
        "event:task_moved:qa>judge",
        "event:integrated",
        "event:task_moved:judge>done",
        "event:step:STEP: Complete",
        "event:step:STEP: Select",  # the overview BUSY, the task file OPEN
        "call:taskhand.state.status:write_atomic#1",  # recovery: the overview OPEN again
        "event:step:STEP: Claim",
        *LOGIC_TASK[:2],
        "event:step:STEP: Conclude",
        "event:step:EXIT",
    ],
}


@pytest.mark.parametrize("dialect", DIALECTS)
def test_sigkill_in_every_stage(tmp_path: Path, home: Path, seed: int, dialect: str) -> None:
    built = build_full(dialect, tmp_path)
    c = FullCampaign.of(f"{dialect}, every stage", built, seed, tmp_path / "logs")
    for kill in POINTS[dialect]:
        assert c.round(kill), f"{c.where()}: the run ended before the kill at {kill}"
        if kill == WRITE and c.life(built.ui).status is L.SPEC:  # the spec, not the plan
            docs = Documents(load(c.plan), StateDir.for_repo(c.repo))
            task = load(c.plan).task(built.ui)
            spec = built.spec(built.ui)
            wanted = normal(spec) if dialect == "markdown" else spec  # an artifact is its own file
            assert task is not None and docs.read(task, "spec") == wanted, c.where()
        if kill.startswith("call:shutil"):  # the picture is kept, its copy not yet wiped
            assert c.life(built.ui).status is L.PROTOTYPE, c.where()
            artifacts = StateDir.for_repo(c.repo).artifacts(c.plan, built.ui)
            assert (artifacts / "prototype-wireframe.svg").is_file(), c.where()
    finish(c)
    verify(c)
    roles = c.roles_run(built.ui)
    for role in ("writer", "planner", "designer", "tester", "implementer", "qa", "judge"):
        assert role in roles, f"{c.where()}: no {role} unit ran to its end: {roles}"


# -- 2. a question and the gates ---------------------------------------------------------------

ASK = "call:taskhand.pipeline.track:Tracker.ask"
RECORDED = "call:taskhand.state.lifecycle:LifecycleRows.ask"  # neither shown nor moved yet
FINISH_ATTEMPT = "call:taskhand.state.store:Store.finish_attempt"


def waits(c: FullCampaign, task_id: str, status: Lifecycle) -> None:
    """The run ended waiting for a person, with `task_id` at `status` and WAIT in its dialect."""
    assert c.status() == "waiting", f"{c.where()}: the run is {c.status()}"
    life = c.life(task_id)
    assert (life.status, life.waiting) == (status, True), f"{c.where()}: {life}"
    assert c.dialect_status(task_id) is Status.WAIT, c.where()


def killed_waiting(
    c: FullCampaign, task_id: str, status: Lifecycle, ended: str, waiting: bool = True
) -> None:
    """A kill came after the task's move to a person's gate, before its conclusion."""
    life = c.life(task_id)
    assert (life.status, life.waiting) == (status, waiting), f"{c.where()}: {life}"
    assert c.dialect_status(task_id) is Status.BUSY, c.where()
    with c.open_store() as store:
        last = store.attempts(c.run_now().id, task_id)[-1]
    assert str(last.status) == ended, f"{c.where()}: the last attempt is {last.status}"


def units_done(c: FullCampaign) -> int:
    with c.open_store() as store:
        return sum(1 for u in store.units(c.run_now().id) if u.outcome)


def open_attempts(c: FullCampaign) -> int:
    with c.open_store() as store:
        return len(store.open_attempts(c.run_now().id))


@pytest.mark.parametrize(
    ("dialect", "first", "answer_first"),
    [
        ("markdown", ASK, False),
        ("tasktrack", ASK, True),
        ("markdown", f"{FINISH_ATTEMPT}#1", True),  # the question's attempt ended
        ("tasktrack", f"{FINISH_ATTEMPT}#1", False),
        ("markdown", RECORDED, False),
    ],
)
def test_sigkill_at_a_question_and_the_gates(
    tmp_path: Path, home: Path, seed: int, dialect: str, first: str, answer_first: bool
) -> None:
    """A gated plan: the writer asks, the plan and the prototype wait for a person. Killed
    right after each move to a gate, the run resumes to the same wait, working on nothing and
    asking nothing again; or, when the person moved first (the task still BUSY), goes on from
    the move. The two alternate from gate to gate."""
    built = build_full(dialect, tmp_path, autonomy="gated", asks=True, bounce=False)
    ui, logic = built.ui, built.logic
    c = FullCampaign.of(f"{dialect}, gated, first {first}", built, seed, tmp_path / "logs")
    gates = [
        (first, ui, L.NEEDS_INPUT, "question" if first.startswith(FINISH_ATTEMPT) else "running"),
        (FINISH_ATTEMPT, ui, L.PLANNED, "awaiting"),  # the plan's attempt ended at its gate
        ("event:task_moved:prototype>prototype", ui, L.PROTOTYPE, "running"),
        ("event:task_moved:plan>planned", logic, L.PLANNED, "running"),
    ]
    for number, (kill, task_id, status, ended) in enumerate(gates):
        if kill == FINISH_ATTEMPT:  # after recovery ends the attempts a kill left open
            kill = f"{kill}#{1 + open_attempts(c)}"
        assert c.round(kill), c.where()
        if kill == RECORDED:  # the question is asked, but the task is still at its stage
            killed_waiting(c, task_id, L.SPEC, ended, waiting=False)
            with c.open_store() as store:
                assert [q.open for q in store.questions(str(c.plan.resolve()), ui)] == [True]
        else:
            killed_waiting(c, task_id, status, ended)
        if answer_first == (number % 2 == 0):
            person(c)
            continue
        done = units_done(c)
        assert not c.round(None), c.where()
        waits(c, task_id, status)
        assert units_done(c) == done, f"{c.where()}: a unit ran before the person moved"
        person(c)
    finish(c)
    verify(c)
    assert [c.roles_run(t).count("writer") for t in built.ids] == [2, 1], c.where()
    assert [c.roles_run(t).count("planner") for t in built.ids] == [1, 1], c.where()
    assert c.roles_run(ui).count("designer") == 1, c.where()


# -- 3. inside delivery ------------------------------------------------------------------------

DELIVERY = [
    "event:task_moved:judge>done",  # the ui task landed, its delivery begun
    "call:taskhand.delivery.remote:push",  # its branch pushed, not yet recorded
    "call:taskhand.delivery.gh:Gh.pr_create",  # its pull request opened, the address not kept
    "event:delivered",  # kept, the task not yet moved
    "event:task_moved:done>delivered",  # moved, not yet concluded
    "call:taskhand.delivery.gh:Gh.pr_view",  # the logic task's: asked whether one is open
    "call:taskhand.delivery.gh:Gh.pr_create",  # its pull request, stacked on the ui task's
    "event:task_concluded",
]


@pytest.mark.parametrize("dialect", DIALECTS)
def test_sigkill_inside_delivery_opens_nothing_twice(
    tmp_path: Path, home: Path, seed: int, monkeypatch: pytest.MonkeyPatch, dialect: str
) -> None:
    """A pull request per task, against a bare repository as the remote and the stand-in gh:
    killed at each step of each task's delivery, the run opens each pull request once."""
    built = build_full(dialect, tmp_path, delivers=True)
    remote = with_remote(built.repo, tmp_path, monkeypatch)
    c = FullCampaign.of(f"{dialect}, delivery", built, seed, tmp_path / "logs")
    for kill in DELIVERY:
        assert c.round(kill), f"{c.where()}: the run ended before the kill at {kill}"
    finish(c)
    verify(c)
    with c.open_store() as store:
        landed = {a.task_id: a for a in store.attempts(c.run_now().id) if a.status == "passed"}
        lives = store.lives(str(c.plan.resolve()))
    prs = {pr["head"]: pr for pr in remote.prs()}
    calls = remote.calls()
    creates = [call for call in calls if call[:2] == ["pr", "create"]]
    assert len(prs) == len(remote.prs()) == len(creates) == 2, f"{c.where()}: {calls}"
    for task_id, attempt in landed.items():
        assert remote.tip(attempt.branch) == attempt.candidate_sha, c.where()
        assert prs[attempt.branch]["url"] == lives[task_id].pr, c.where()
        if dialect == "markdown":  # and in its task file, once, whatever the kills
            written = validate(c.plan).require().task(task_id)
            assert written is not None and written.pr == lives[task_id].pr, c.where()
    ui, logic = landed[built.ui].branch, landed[built.logic].branch
    assert prs[logic]["base"] == ui and prs[ui]["base"] == "main", f"{c.where()}: {prs}"


# -- 4. kills at random events -----------------------------------------------------------------


@pytest.fixture(scope="module")
def references(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[Event]]:
    """The events of one uninterrupted run of each plan: how many lie ahead of a point."""
    folder = tmp_path_factory.mktemp("reference")
    found = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TASKHAND_HOME", str(folder / "home"))
        for dialect in DIALECTS:
            built = build_full(dialect, folder / dialect)
            heard: list[Event] = []
            config = runconfig.build(built.plan, Flags(agent="replay", script=built.script))
            summary = launch.start(built.plan, config, heard.append, built.repo)
            assert summary.status == "completed", summary
            found[dialect] = heard
    return found


def random_kill(c: FullCampaign, rng: random.Random, ref: list[Event]) -> str:
    """A random number of events this process will emit: at most a third of a run, and
    MARGIN fewer than the reference emits after the tasks done so far."""
    done = c.done()
    completes = [
        i for i, e in enumerate(ref) if e.data.get("message") == "TaskTrack STEP: Complete"
    ]
    ahead = len(ref) - (completes[done - 1] + 1 if done else 0)
    return str(rng.randint(1, max(1, min(ahead - MARGIN, len(ref) // 3))))


@pytest.mark.parametrize("dialect", DIALECTS)
def test_sigkill_at_random_events(
    tmp_path: Path,
    home: Path,
    seed: int,
    references: dict[str, list[Event]],
    dialect: str,
) -> None:
    rng = random.Random(seed)
    c = FullCampaign.of(
        f"{dialect}, random events", build_full(dialect, tmp_path), seed, tmp_path / "logs"
    )
    for _ in range(KILLS):
        if not c.round(random_kill(c, rng, references[dialect])):
            break  # the run ended first: resumed, it skips the stages done before the kill
    assert len(c.kills) >= KILLS // 2, f"{c.where()}: too few kills"
    finish(c)
    verify(c)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_sigkill_at_random_events_with_people_at_the_gates(
    tmp_path: Path, home: Path, seed: int, dialect: str
) -> None:
    """The gated plan killed at random, a person moving at random: right after a kill (the
    task may still say BUSY), or once the run waits."""
    rng = random.Random(seed)
    built = build_full(dialect, tmp_path, autonomy="gated", asks=True, bounce=False)
    c = FullCampaign.of(f"{dialect}, gated, random events", built, seed, tmp_path / "logs")
    for _ in range(KILLS):
        if not c.round(str(rng.randint(1, 24))):
            if c.status() == "completed":
                break
            assert person(c), f"{c.where()}: the run waits, but no task waits for a person"
        elif rng.random() < 0.5:
            person(c)
    finish(c)
    verify(c)
