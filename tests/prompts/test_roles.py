"""The visibility wall for every role of the full lifecycle: each sees what its stage needs
(the spec, the plan with a person's Review, the interview's answers, a person's remarks, the
newest rejection) and none of the machinery: no state paths, caps, costs, commands of the
harness, or another task's ledger."""

from __future__ import annotations

import json
import re
from pathlib import Path

from taskhand.pipeline.lifecycle import plan_key
from taskhand.run import launch
from taskhand.run.preflight import load
from taskhand.state.documents import Documents
from taskhand.state.life import Lifecycle
from taskhand.state.paths import StateDir, home
from taskhand.state.store import Store
from tests.plans import md_task
from tests.prompts.test_prompts import prompt_of
from tests.runs import Recorder, make_repo, run_plan, write

SECRET = "Only T-001's ledger knows: the header toggle is mislabelled."


def test_every_role_sees_its_stage_and_none_of_the_machinery(tmp_path: Path) -> None:
    found = "- [found] the toggle shows in the header\n- `$ test -f t1.txt` passes\n"
    files = {
        "plan/overview.md": "# Dark mode\n\n## Goal\nA dark theme.\n",
        "plan/T-001-toggle.md": md_task(
            "T-001",
            "Dark mode toggle",
            f"## Description\nA toggle.\n\n## Acceptance criteria\n{found}",
            kind="ui",
        ),
        "plan/T-002-docs.md": md_task(
            "T-002", "Document it", "## Description\nSay so.\n\n## Acceptance criteria\n- said\n"
        ),
    }
    repo = make_repo(tmp_path / "repo", files)
    reject = {
        "verdict": "reject", "category": "acceptance_gap", "concern": SECRET,
        "next_step": "Label it.", "cost": 0.4321, "tokens_in": 4321,
    }  # fmt: skip
    question = {"outcome": "question", "question": "Where?", "options": ["Header", "Settings"]}
    roles = {
        "T-001": {
            "writer": [question, {"resolution": "SPEC-OF-T-001: a header toggle."}],
            "planner": [{"resolution": "PLAN-OF-T-001: write t1.txt."}],
            "qa": [reject, {"verdict": "accept"}],
        },
        "T-002": {"writer": [{"resolution": "SPEC-OF-T-002"}]},
    }
    tasks = {
        "T-001": [{"actions": [write("t1.txt", "1\n")], "cost": 0.4321, "resolution": "did"}],
        "T-002": [{"actions": [write("t2.txt", "2\n")], "resolution": "did"}],
    }
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps({"tasks": tasks, "roles": roles}))
    caps = dict(max_attempts=31, bounces=29, unit_seconds=1234.5, task_dollars=12.34)
    settings = {"pipeline": "full", "autonomy": "full"}
    summary, _ = run_plan(repo / "plan", repo, replay, settings=settings, **caps)
    assert summary.status == "waiting"  # T-001 asked
    plan = load(repo / "plan")
    key, state = plan_key(plan), StateDir.for_repo(repo)
    with Store.open(state.database) as store:  # answered, and a remark, as the moves write them
        store.answer(key, "T-001", 1, "a", "left of the avatar")
        store.remark(key, "T-001", "comment", "REMARK: keep the toggle small.")
        store.set_life(key, "T-001", Lifecycle.SPEC)
        store.set_task(summary.run_id, "T-001", "OPEN")
    Documents(plan, state).add_review(plan.task("T-001"), "REVIEW: say which file.")  # type: ignore[arg-type]
    summary = launch.resume(summary.run_id, Recorder(), repo)
    assert summary.status == "completed"
    with Store.open(state.database) as store:
        units = store.units(summary.run_id)
    prompts = {(u.task_id, str(u.role), u.id): prompt_of(u) for u in units}
    machinery = [
        "state.db", "events.jsonl", "transcripts", "worktrees", "artifacts", "taskhand/run-",
        str(home()), str(state.root), summary.run_id, "taskhand.toml", "taskhand ",
        "1234.5", "12.34", "0.4321", "4321", "needs-input", "prototype_rounds",
    ]  # fmt: skip
    for (task, role, _), prompt in prompts.items():
        for word in machinery:
            assert word not in prompt, (task, role, word)
        assert not re.search(r"\b(29|31)\b|\$\s*\d", prompt), (task, role)
        assert not re.search(r"\b(cost|budget|token|bounce)s?\b", prompt, re.IGNORECASE)
        if task == "T-002":
            assert SECRET not in prompt and "SPEC-OF-T-001" not in prompt, role

    def first(task: str, role: str) -> str:
        return next(p for (t, r, _), p in sorted(prompts.items()) if (t, r) == (task, role))

    def last(task: str, role: str) -> str:
        return [p for (t, r, _), p in sorted(prompts.items()) if (t, r) == (task, role)][-1]

    writer = last("T-001", "writer")
    assert "- T-002 Document it" in writer  # the other tasks, to stay apart
    assert "Q1: Where? -> (a) Header — recommended left of the avatar" in writer
    planner = first("T-001", "planner")
    assert "SPEC-OF-T-001" in planner and "REVIEW: say which file." in planner
    assert "REMARK: keep the toggle small." in planner
    assert "explorer's map" in planner
    implementer = last("T-001", "implementer")
    assert "SPEC-OF-T-001" in implementer and "PLAN-OF-T-001" in implementer
    assert SECRET in implementer  # the qa's rejection, on the rework
    last_round = implementer.split("The change of your last round", 1)[1]
    assert "+++ b/t1.txt" in last_round and "+1" in last_round  # the diff it builds on
    assert "[found] the toggle shows in the header" in first("T-001", "qa")
    judge = first("T-001", "judge")
    assert "try to reject" in judge and "PLAN-OF-T-001" in judge
