"""Crash safety with several jobs (`--jobs 4`): a runner killed with SIGKILL inside
integration (a candidate replayed onto a moved run branch, recorded, landed) or at random
moments resumes to a run where every task is done once, nothing is integrated twice (nor
recorded so twice in the integration ledger), no workspace but those of attempts that ended
and no branch is left, and the user's checkout is byte-identical."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from taskhand import demo
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from taskhand.workspace.snapshot import snapshot
from tests.plans import md_task
from tests.runs import make_repo
from tests.scenarios.test_resume import (
    MAX_ROUNDS,
    Campaign,
    _git,
    cli_round,
    expected_files,
    landed_once,
    nothing_orphaned,
    toml_script,
    tree_files,
    with_sleeps,
)


def verify_parallel(c: Campaign) -> None:
    """What a completed run of several jobs, killed often, must have: each task integrated
    once, one commit per task on one line of history (in the order they landed, each the
    passing attempt's candidate as replayed), the script's files, nothing left behind, and
    the user's checkout as it was. Attempts may be requeued beyond the script's where a
    candidate conflicted with one that landed first."""
    where = c.where()
    ids = [task_id for task_id, _ in c.tasks]
    landed_records = landed_once(c)
    run, attempts, passed = landed_records.run, landed_records.attempts, landed_records.passed
    known = {"passed", "failed", "requeued", "rejected", "interrupted"}  # the demo fails once
    assert {a.status for a in attempts} <= known
    interrupted = {a.id for a in attempts if a.status == "interrupted"}
    assert interrupted == c.interrupted, f"{where}: {sorted(interrupted)} {sorted(c.interrupted)}"
    base, branch = run.base_sha, run.run_branch
    log = _git(c.repo, "log", "--reverse", "--format=%H %P%x09%s", f"{base}..{branch}")
    rows = [line.split("\t", 1) for line in log.splitlines()]
    titles = dict(c.tasks)
    assert sorted(subject for _, subject in rows) == sorted(f"{t}: {titles[t]}" for t in ids)
    shas = [shas.split() for shas, _ in rows]
    parents = [s[1:] for s in shas]
    assert parents == [[p] for p in [base, *[s[0] for s in shas][:-1]]], f"{where}: {parents}"
    landed = {subject.split(":")[0]: s[0] for (_, subject), s in zip(rows, shas, strict=True)}
    assert landed == {t: passed[t].candidate_sha for t in ids}, where
    files = expected_files(c.repo, base, c.script, ids)
    assert tree_files(c.repo, branch) == files, f"{where}: the run branch's files"
    nothing_orphaned(c, landed_records)
    assert snapshot(c.repo) == c.before, f"{where}: the checkout changed"


class FourJobs(Campaign):
    flags = ("--jobs", "4")


# Kills where several jobs meet: a candidate replayed onto a moved run branch and not yet
# recorded, recorded and not yet gated, landed and not yet said; and the events around.
JOBS_POINTS = [
    "call:taskhand.workspace.replay:onto",
    "call:taskhand.state.store:Store.rebase_attempt",
    "event:replayed",
    "call:taskhand.workspace.refs:move_branch#2",
    "event:integrated#2",
    "event:attempt_started#3",
    "event:step:STEP: Complete",
]


def build_parallel(folder: Path) -> tuple[Path, Path, Path]:
    """Four tasks that may all run at once, each writing a file of its own (so every one
    after the first to land is replayed), and a fifth that waits on two of them."""
    files = {"plan/overview.md": "# Files\n\n## Goal\nWrite files.\n"}
    tasks: dict[str, list[dict[str, Any]]] = {}
    for n in range(1, 6):
        task_id = f"T-00{n}"
        check = f"- `$ test -f out/f{n}.txt` passes\n"
        body = f"## Description\nWrite f{n}.\n\n## Acceptance criteria\n{check}"
        extra = {"depends": "T-001, T-002"} if n == 5 else {}
        files[f"plan/{task_id}-file.md"] = md_task(task_id, f"File {n}", body, **extra)
        actions = [{"sleep": 0.2 * n}, {"write": f"out/f{n}.txt", "text": f"{n}\n"}]
        tasks[task_id] = [{"resolution": f"Wrote f{n}.", "actions": actions}]
    repo = make_repo(folder / "repo", files)
    script = folder / "replay.toml"
    script.write_text(toml_script(tasks), encoding="utf-8")
    return repo, repo / "plan", script


@pytest.mark.parametrize("kill", JOBS_POINTS)
def test_sigkill_with_four_jobs_inside_integration(
    tmp_path: Path, home: Path, seed: int, kill: str
) -> None:
    repo, plan, script = build_parallel(tmp_path)
    c = FourJobs(f"four jobs, {kill}", repo, plan, script, seed, tmp_path / "logs")
    killed = c.round(kill)
    c.finish()
    verify_parallel(c)
    if "replay" in kill or "rebase" in kill:
        assert killed, f"{c.where()}: no candidate was replayed: the jobs did not overlap"


def test_sigkill_at_random_times_cli_with_four_jobs(tmp_path: Path, home: Path, seed: int) -> None:
    rng = random.Random(seed)
    repo, plan, script = demo.build(tmp_path / "campaign")
    with_sleeps(script, rng)
    c = Campaign("cli campaign, four jobs", repo, plan, script, seed, tmp_path / "logs")
    window, done = 1.0, c.done()
    while c.status() != "completed":
        assert c.rounds < MAX_ROUNDS, f"{c.where()}: no progress"
        delay = rng.uniform(0.2, window) if len(c.kills) < 10 else None
        cli_round(c, delay, ("--jobs", "4"))
        window, done = (1.0, c.done()) if c.done() > done else (window * 1.25, done)
    verify_parallel(c)
    assert len(c.kills) >= 5, f"{c.where()}: only {len(c.kills)} kills"


# Kills between a conflict and the requeue: the conflict found, the landings since the base
# read, the blame named, the attempt ended as requeued and its event not yet said, the event
# said, and the requeued task's next attempt begun.
REQUEUE_POINTS = [
    "call:taskhand.workspace.replay:onto#2",
    "call:taskhand.pipeline.requeue:since",
    "call:taskhand.pipeline.requeue:touching",
    "call:taskhand.pipeline.harness:Harness.end_attempt#2",
    "event:attempt_requeued",
    "event:attempt_started#4",
]


def build_one_spot(folder: Path) -> tuple[Path, Path, Path]:
    """Three tasks inserting a line at one spot of a changelog, all at once: the first to
    land is replayed onto by none, each of the others conflicts with it and is requeued."""
    changelog = "# Changelog\n\n## Unreleased\n\n## 1.0\n"
    files = {"CHANGELOG.md": changelog, "plan/overview.md": "# Log\n\n## Goal\nLog.\n"}
    tasks: dict[str, list[dict[str, Any]]] = {}
    for n in range(1, 4):
        task_id = f"T-00{n}"
        check = f"- `$ grep -qx -- '- entry {n}' CHANGELOG.md` passes\n"
        body = f"## Description\nLog {n}.\n\n## Acceptance criteria\n{check}"
        files[f"plan/{task_id}-entry.md"] = md_task(task_id, f"Entry {n}", body)
        new = f"## Unreleased\n- entry {n}\n"
        edit = {"edit": "CHANGELOG.md", "old": "## Unreleased\n", "new": new}
        tasks[task_id] = [{"resolution": f"Logged {n}.", "actions": [{"sleep": 0.6}, edit]}]
    repo = make_repo(folder / "repo", files)
    script = folder / "replay.toml"
    script.write_text(toml_script(tasks), encoding="utf-8")
    return repo, repo / "plan", script


class ThreeJobs(Campaign):
    flags = ("--jobs", "3")


@pytest.mark.parametrize("kill", REQUEUE_POINTS)
def test_sigkill_between_a_conflict_and_its_requeue(
    tmp_path: Path, home: Path, seed: int, kill: str
) -> None:
    """Whatever the moment of the kill, the resumed run lands every task once, fails none,
    and every attempt that ended as requeued has its ledger entry blaming a landing and its
    worker's verdict `conflicted` and one attempt_requeued event; an attempt the kill cut
    short has none of these."""
    repo, plan, script = build_one_spot(tmp_path)
    c = ThreeJobs(f"three jobs at one spot, {kill}", repo, plan, script, seed, tmp_path / "logs")
    assert c.round(kill), f"{c.where()}: the run never reached {kill}"
    c.finish()
    where = c.where()
    landed = landed_once(c)
    statuses = {a.status for a in landed.attempts}
    assert statuses <= {"passed", "requeued", "interrupted"}, f"{where}: {statuses}"
    assert {a.id for a in landed.attempts if a.status == "interrupted"} == c.interrupted, where
    final = _git(c.repo, "show", f"{landed.run.run_branch}:CHANGELOG.md")
    entries = sorted(line for line in final.splitlines() if line.startswith("- entry"))
    assert entries == ["- entry 1", "- entry 2", "- entry 3"], f"{where}: {final}"
    with Store.open(landed.state.database) as store:
        ledger = {e.attempt_id: e for e in store.ledger(landed.run.id, None)}
        verdicts = {v.attempt_id: v.outcome for v in store.worker_verdicts(landed.run.id)}
    said = Counter(
        (e.task_id, e.data["attempt"]) for e in landed.events if e.kind == "attempt_requeued"
    )
    for a in landed.attempts:
        if a.status == "requeued":
            assert "after the landing of T-00" in ledger[a.id].summary, where
            assert verdicts[a.id] == "conflicted", where
            assert said[(a.task_id, a.number)] == 1, f"{where}: {a.task_id} {a.number} {said}"
        if a.status == "interrupted":
            assert a.id not in ledger and a.id not in verdicts, where
    assert any(a.status == "requeued" for a in landed.attempts), where
    nothing_orphaned(c, landed)
    assert snapshot(c.repo) == c.before, f"{where}: the checkout changed"


# Kills inside the merge queue while several candidates gate at once: one joined and the next
# not yet, checks begun on top of those ahead, a result in and not yet said, a replay made,
# the attempt rebased onto the commit that lands and the branch not yet moved, and after.
QUEUE_POINTS = [
    "event:queued#2",
    "event:gating",
    "event:gating#2",
    "call:taskhand.pipeline.gating:_gate#2",
    "event:gated",
    "call:taskhand.workspace.replay:onto#2",
    "call:taskhand.state.store:Store.rebase_attempt",
    "call:taskhand.workspace.refs:move_branch#2",
    "event:integrated#2",
]


def build_gating(folder: Path, count: int = 4) -> tuple[Path, Path, Path]:
    """`count` tasks made close together, each check half a second: their candidates wait in the
    queue together, each gating on top of those ahead while those still gate."""
    files = {"plan/overview.md": "# Files\n\n## Goal\nWrite files.\n"}
    tasks: dict[str, list[dict[str, Any]]] = {}
    for n in range(1, count + 1):
        task_id = f"T-{n:03d}"
        check = f"- `$ sh -c 'sleep 0.5; test -f out/f{n}.txt'` passes\n"
        body = f"## Description\nWrite f{n}.\n\n## Acceptance criteria\n{check}"
        files[f"plan/{task_id}-file.md"] = md_task(task_id, f"File {n}", body)
        actions = [{"sleep": 0.1 * n}, {"write": f"out/f{n}.txt", "text": f"{n}\n"}]
        tasks[task_id] = [{"resolution": f"Wrote f{n}.", "actions": actions}]
    repo = make_repo(folder / "repo", files)
    script = folder / "replay.toml"
    script.write_text(toml_script(tasks), encoding="utf-8")
    return repo, repo / "plan", script


def checked_where_it_landed(c: Campaign) -> None:
    """Each commit the run branch holds passed its checks on exactly its tree: a replay the
    queue made has a `gating` on it whose `gated` passed; any other commit is a worker's own
    candidate, on the base its gate stage checked it on."""
    with Store.open(StateDir.for_repo(c.repo).database) as store:
        run = store.runs()[0]
        events = store.events(run.id)
    replays = {e.data["sha"] for e in events if e.kind == "replayed"}
    passed = set()
    for gating in (e for e in events if e.kind == "gating"):
        ended = [e for e in events if e.kind == "gated" and e.task_id == gating.task_id]
        after = [e for e in ended if e.id > gating.id][:1]
        if after and after[0].data["ok"]:
            passed.add(gating.data["sha"])
    for sha in _git(c.repo, "rev-list", f"{run.base_sha}..{run.run_branch}").split():
        assert sha not in replays or sha in passed, f"{c.where()}: {sha} landed unchecked"


@pytest.mark.parametrize("kill", QUEUE_POINTS)
def test_sigkill_inside_the_merge_queue(tmp_path: Path, home: Path, seed: int, kill: str) -> None:
    repo, plan, script = build_gating(tmp_path)
    c = FourJobs(f"four jobs gating, {kill}", repo, plan, script, seed, tmp_path / "logs")
    assert c.round(kill), f"{c.where()}: the run never reached {kill}"
    c.finish()
    verify_parallel(c)
    checked_where_it_landed(c)


def test_random_sigkills_and_sigterms_while_candidates_gate(
    tmp_path: Path, home: Path, seed: int
) -> None:
    """Kills (SIGKILL, and SIGTERM every third) at random moments of a queue where several
    candidates gate at once; then resume: each task lands once, on a tree it was checked on."""
    rng = random.Random(seed)
    repo, plan, script = build_gating(tmp_path, 10)
    c = FourJobs("random kills while gating", repo, plan, script, seed, tmp_path / "logs")
    while c.status() != "completed":
        assert c.rounds < MAX_ROUNDS, f"{c.where()}: no progress"
        delay = rng.uniform(0.3, 1.5) if len(c.kills) < 6 else None
        cli_round(c, delay, ("--jobs", "4"), term=len(c.kills) % 3 == 2)
    verify_parallel(c)
    checked_where_it_landed(c)
    assert len(c.kills) >= 3, f"{c.where()}: only {len(c.kills)} kills"
