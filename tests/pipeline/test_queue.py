"""The merge queue: candidates wait in order, each checked on the tree it would land as (the
run branch and every candidate ahead of it), all at once; they land in queue order, the run
branch only ever moving to a tree whose checks passed on exactly that tree; when one fails,
those behind are checked again without it. First its decisions alone, then real runs."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from taskhand.gates import GateResult
from taskhand.pipeline.queue import Candidate, MergeQueue, Step
from tests.plans import md_task
from tests.runs import attempt, git, make_repo, run_plan, script

PASSED = [GateResult("command", True, "passed")]
FAILED = [GateResult("command", False, "failed")]


def queue_of(*names: str, gates: int = 4) -> tuple[MergeQueue, list[Candidate]]:
    """A queue on the run branch's head "h0" with a candidate per name, each made on h0."""
    queue = MergeQueue(threading.RLock(), gates)
    found = [Candidate(name, "h0", f"{name}-own") for name in names]
    for candidate in found:
        queue.join(candidate, "h0")
        queue.ready(candidate)  # reviewed: each may land in its turn
    return queue, found


def replay_all(queue: MergeQueue, candidates: list[Candidate]) -> None:
    """Each replays onto the tip the queue gives it, front first: its own candidate, checked
    already, on its own base h0; else a new commit, name@tip."""
    for c in candidates:
        step, tip = queue.next_step(c)
        assert step is Step.REPLAY
        if tip == c.base:
            queue.replayed(c, c.base, c.own, [], checked=True)
        else:
            queue.replayed(c, str(tip), f"{c.task_id}@{tip}", [])


def test_each_candidate_is_checked_on_those_ahead_and_the_front_lands() -> None:
    queue, (a, b, c) = queue_of("A", "B", "C")
    replay_all(queue, [a, b, c])
    assert (b.onto, c.onto) == ("A-own", "B@A-own")  # A on h0 is its own candidate, checked
    assert queue.beneath(c) == ["A", "B"]
    # B and C check at once, each in a slot of its own; A lands meanwhile.
    gate_b, gate_c = queue.next_step(b), queue.next_step(c)
    assert gate_b[0] is gate_c[0] is Step.GATE and gate_b[1] != gate_c[1]
    assert queue.next_step(a) == (Step.LAND, "h0")
    queue.leave(a, landed="A-own")
    assert queue.gated(c, int(gate_c[1]), c.sha, PASSED)  # C passed first: it still waits
    assert queue.gated(b, int(gate_b[1]), b.sha, PASSED)
    assert queue.next_step(b) == (Step.LAND, "A-own")
    queue.leave(b, landed=b.sha)
    assert queue.next_step(c) == (Step.LAND, "B@A-own")  # its checked tree is the new head


def test_a_failure_ahead_re_gates_those_behind_without_it() -> None:
    queue, (a, b, c) = queue_of("A", "B", "C")
    replay_all(queue, [a, b, c])
    slot_b, slot_c = queue.next_step(b)[1], queue.next_step(c)[1]
    queue.gated(c, int(slot_c), c.sha, PASSED)
    # B fails on top of A, which has not landed: C is replayed onto A without B, and B waits.
    assert queue.gated(b, int(slot_b), b.sha, FAILED)
    assert queue.next_step(c) == (Step.REPLAY, "A-own")
    queue.replayed(c, "A-own", "C@A-own", [])
    assert queue.beneath(c) == ["A"]
    assert queue.next_step(c)[0] is Step.GATE
    queue.leave(a, landed="A-own")
    # At the front, on exactly the head it failed on: the landing of A is to blame.
    assert queue.next_step(b) == (Step.BROKEN, "A-own")
    queue.leave(b)


def test_a_failure_whose_cause_leaves_is_checked_again() -> None:
    queue, (a, b) = queue_of("A", "B")
    replay_all(queue, [a, b])
    a.checked = None  # A's own tree needs checking here: say it was replayed
    queue.gated(b, int(queue.next_step(b)[1]), b.sha, FAILED)
    queue.leave(a)  # A left without landing (its attempt ended)
    assert queue.next_step(b) == (Step.REPLAY, "h0")  # B goes again, on the head alone


def test_a_conflict_waits_for_those_ahead_and_is_passed_over() -> None:
    queue, (a, b, c) = queue_of("A", "B", "C")
    replay_all(queue, [a])
    queue.next_step(b)
    queue.replayed(b, "A-own", "", ["CHANGELOG.md"])
    assert queue.next_step(c) == (Step.REPLAY, "A-own")  # C builds on A, passing over B
    queue.replayed(c, "A-own", "C@A-own", [])
    assert queue.beneath(c) == ["A"]
    queue.next_step(a)
    queue.leave(a, landed="A-own")
    assert queue.next_step(b) == (Step.CONFLICTED, "A-own")


def test_gate_slots_are_bounded_and_given_front_first() -> None:
    queue, (a, b, c) = queue_of("A", "B", "C", gates=1)
    for cand, tip in ((a, "h0"), (b, "A@h0"), (c, "B@A@h0")):
        assert queue.next_step(cand) == (Step.REPLAY, tip)
        queue.replayed(cand, tip, f"{cand.task_id}@{tip}", [])
    assert queue.next_step(a) == (Step.GATE, 1)
    done: list[str] = []

    def wait_for_gate(c: Candidate) -> None:
        queue.next_step(c)
        done.append(c.task_id)

    waiting = [threading.Thread(target=wait_for_gate, args=(x,)) for x in (c, b)]
    for thread in waiting:  # C waits first, then B
        thread.start()
        time.sleep(0.3)
    queue.gated(a, 1, a.sha, PASSED)  # the slot is free: B, nearer the front, gets it first
    waiting[1].join(5)
    assert done == ["B"]
    queue.gated(b, 1, b.sha, PASSED)
    waiting[0].join(5)
    assert done == ["B", "C"]


def test_a_candidate_still_under_review_is_built_on_but_lands_only_when_ready() -> None:
    queue = MergeQueue(threading.RLock(), 4)
    a, b = Candidate("A", "h0", "A-own"), Candidate("B", "h0", "B-own")
    for c in (a, b):
        queue.join(c, "h0")
    queue.ready(b)  # B is through its review; A, ahead of it, is not yet
    replay_all(queue, [a, b])
    assert b.onto == "A-own"  # B is checked on top of A meanwhile
    queue.gated(b, int(queue.next_step(b)[1]), b.sha, PASSED)
    assert queue.next_step(a, until=lambda: True) is None  # checked, not ready: nothing to do
    assert queue.next_step(b, until=lambda: True) is None  # and B behind it
    queue.ready(a)
    assert queue.next_step(a) == (Step.LAND, "h0")


def test_a_candidate_waits_for_those_ahead_while_its_own_checks_run() -> None:
    """At its gate a candidate takes the queue's steps as those ahead allow them, until its
    own checks are done: one that joins before the candidate ahead was replayed is checked
    once that replay is there, not after its review."""
    queue = MergeQueue(threading.RLock(), 4)
    a, b = Candidate("A", "h0", "A-own"), Candidate("B", "h0", "B-own")
    for c in (a, b):
        queue.join(c, "h0")
    own_done = threading.Event()
    steps: list[object] = []
    waiting = threading.Thread(target=lambda: steps.append(queue.next_step(b, own_done.is_set)))
    waiting.start()
    time.sleep(0.1)
    assert steps == []  # nothing to do while A has no replay: B waits, its checks still running
    replay_all(queue, [a])
    waiting.join(5)
    assert steps == [(Step.REPLAY, "A-own")]  # on top of A, at once
    queue.replayed(b, "A-own", "B@A-own", [])
    assert queue.next_step(b, own_done.is_set)[0] is Step.GATE
    # Its own checks done, and nothing to do now (its check in the queue runs): on to review.
    own_done.set()
    assert queue.next_step(b, own_done.is_set) is None


def lines_plan(tmp_path: Path, checks: dict[str, str]) -> Path:
    files = {"plan/overview.md": "# Files\n\n## Goal\nFiles.\n"}
    for task_id, check in checks.items():
        body = f"## Description\nWork.\n\n## Acceptance criteria\n- `$ {check}` passes\n"
        files[f"plan/{task_id}-work.md"] = md_task(task_id, "Work", body, max_attempts="3")
    return make_repo(tmp_path / "repo", files)


def test_candidates_gate_at_once_on_those_ahead_and_land_in_queue_order(tmp_path: Path) -> None:
    """Four independent tasks made at once, each check a second long: each is checked on the
    tree it lands as, the later ones on top of those ahead while those are still checking,
    and each commit of the run branch is one whose checks passed on exactly that tree."""
    checks = {f"T-00{n}": f"sh -c 'sleep 1; test -f f{n}.txt'" for n in range(1, 5)}
    repo = lines_plan(tmp_path, checks)
    tasks = {
        f"T-00{n}": [attempt({"write": f"f{n}.txt", "text": "x\n"}, {"sleep": 0.3 * n})]
        for n in range(1, 5)
    }
    summary, recorder = run_plan(repo / "plan", repo, script(tmp_path, tasks), settings={"jobs": 4})
    assert summary.status == "completed", summary.message
    queued = [e.task_id for e in recorder.of("queued")]
    landed = [e.task_id for e in recorder.of("integrated")]
    assert landed == queued, "candidates land in the order they joined the queue"
    gating = recorder.of("gating")
    on = {e.task_id: e.data["on"] for e in gating if e.data["on"]}
    assert on.get(queued[-1]) and len(on[queued[-1]]) >= 1, on  # checked on top of another
    # Checks ran at once: one began before another ended.
    kinds = [(e.kind, e.task_id) for e in recorder.events if e.kind in ("gating", "gated")]
    at_once = most = 0
    for kind, _ in kinds:
        at_once += 1 if kind == "gating" else -1
        most = max(most, at_once)
    assert most >= 2, kinds
    # Checked in the queue while its own checks ran: the last one's check on top of those
    # ahead began before its own checks' results came in, so landing waits for no second one.
    last = queued[-1]
    began = next(e.id for e in gating if e.task_id == last)
    own = next(e.id for e in recorder.of("gate") if e.task_id == last)
    assert began < own, "the queue's check waited for the candidate's own"
    # Each commit on the run branch passed its checks on exactly its tree: a replay (made
    # in the queue) had its checks pass there; any other is its worker's own candidate on its
    # own base, which the gate stage checked.
    replays = {e.data["sha"] for e in recorder.of("replayed")}
    checked: set[str] = set()
    for event in gating:
        ended = [e for e in recorder.of("gated") if e.task_id == event.task_id and e.id > event.id]
        if ended and ended[0].data["ok"]:
            checked.add(event.data["sha"])
    branch = git(repo, "rev-list", "--first-parent", summary.run_branch).split()
    shas = [e.data["sha"] for e in recorder.of("integrated")]
    assert set(shas) <= set(branch)
    assert any(sha in replays for sha in shas), "no candidate landed as a replay"
    for sha in shas:
        assert sha not in replays or sha in checked, f"{sha} landed unchecked"


def test_a_candidate_behind_a_failing_one_lands_without_it(tmp_path: Path) -> None:
    """T-001 lands first. T-002's check passes on its own base and fails on top of T-001
    (it wants no f1.txt), so it is requeued, blamed on T-001; T-003, which joined behind it
    while that check ran and was checked on top of it, is checked again without it and lands
    before T-002's next attempt."""
    checks = {
        "T-001": "test -f f1.txt",
        "T-002": "sh -c 'sleep 1.5; test ! -f f1.txt || test -f again.txt'",
        "T-003": "sh -c 'sleep 0.3; test -f f3.txt'",
    }
    repo = lines_plan(tmp_path, checks)
    tasks = {
        "T-001": [attempt({"write": "f1.txt", "text": "x\n"}, {"sleep": 0.2})],
        "T-002": [
            attempt({"write": "f2.txt", "text": "x\n"}, {"sleep": 0.6}),
            attempt({"write": "again.txt", "text": "x\n"}, {"sleep": 0.1}),
        ],
        "T-003": [attempt({"write": "f3.txt", "text": "x\n"}, {"sleep": 1.0})],
    }
    summary, recorder = run_plan(repo / "plan", repo, script(tmp_path, tasks), settings={"jobs": 3})
    assert summary.status == "completed", summary.message
    [requeued] = recorder.of("attempt_requeued")
    assert requeued.task_id == "T-002" and requeued.data["after"] == ["T-001"]
    assert "after the landing of T-001" in requeued.data["reason"]
    ons = [e.data["on"] for e in recorder.of("gating") if e.task_id == "T-003"]
    assert ["T-002"] in ons and ons[-1] == [], ons  # gated on T-002, then again without it
    subjects = git(repo, "log", "--reverse", "--format=%s", summary.run_branch).splitlines()
    assert [s.split(":")[0] for s in subjects[1:]] == ["T-001", "T-003", "T-002"]
    assert not recorder.of("attempt_failed")
