"""The replay agent: scripted attempts for the worker, and scripted reviews of each attempt,
loaded from TOML or JSON and checked when they are loaded."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from taskhand.agents.replay import ReplayAgent
from taskhand.agents.replay_script import ScriptError
from taskhand.unit import Case, Role, Unit, Verdict

SCRIPT = f"""
[[tasks."T-002"]]
outcome = "done"
resolution = "Added count()."
[[tasks."T-002".actions]]
write = "wc.py"
text = "def count(text): return len(text.split())\\n"
[tasks."T-002".review]
verdict = "reject"
category = "acceptance_gap"
concern = "Empty files are not handled."
evidence = ["wc.py:count"]
next_step = "Return 0 for empty input and test it."
tokens_in = 900
[[tasks."T-002".review.actions]]
run = ["{sys.executable}", "-c", "open('reviewed.txt', 'w').write('ran')"]
[[tasks."T-002".review.actions]]
write = "notes.txt"
text = "checked"
[tasks."T-002".reviews.security]
verdict = "accept"
concern = "No input reaches a shell."

[[tasks."T-002"]]
outcome = "done"
resolution = "Handled empty files."

[[tasks."T-003"]]
outcome = "done"
[tasks."T-003".review]
outcome = "error"
failure = "the reviewer's model went away"
"""


def load(tmp_path: Path, text: str = SCRIPT) -> ReplayAgent:
    path = tmp_path / "replay.toml"
    path.write_text(text)
    return ReplayAgent.load(path)


def unit(
    tmp_path: Path,
    task: str = "T-002",
    attempt: int = 1,
    role: Role = Role.EVALUATOR,
    lens: str = "general",
) -> Unit:
    worktree = tmp_path / f"{role}-{task}-{attempt}-{lens}"
    worktree.mkdir(exist_ok=True)
    return Unit(role, task, attempt, "Review T-002.", worktree, 30.0, lens=lens)


def test_the_review_of_an_attempt_gives_its_verdict_and_usage(tmp_path: Path) -> None:
    outcome = load(tmp_path).run(unit(tmp_path))

    assert outcome.case is Case.DONE, outcome.failure
    assert outcome.verdict == Verdict(
        False,
        "acceptance_gap",
        "Empty files are not handled.",
        ["wc.py:count"],
        "Return 0 for empty input and test it.",
    )
    assert (outcome.usage.tokens_in, outcome.usage.tokens_out) == (900, 200)
    assert outcome.transcript[-1] == {"role": "assistant", "verdict": outcome.verdict.as_json()}


def test_the_reviews_actions_run_in_the_reviewers_worktree(tmp_path: Path) -> None:
    review = unit(tmp_path)

    load(tmp_path).run(review)

    assert (review.worktree / "reviewed.txt").read_text() == "ran"
    assert (review.worktree / "notes.txt").read_text() == "checked"
    assert not (review.worktree / "wc.py").exists()  # the worker's actions are not the review's


def test_each_message_reaches_the_units_hook_as_it_happens(tmp_path: Path) -> None:
    review = unit(tmp_path)
    told: list[tuple[dict[str, object], bool]] = []  # each message, and whether the command ran
    review.on_message = lambda m: told.append((m, (review.worktree / "reviewed.txt").exists()))

    outcome = load(tmp_path).run(review)

    assert [m for m, _ in told] == outcome.transcript  # every message, in order, as returned
    roles = [(m["role"], m.get("action"), ran) for m, ran in told]
    assert roles == [
        ("user", None, False),
        ("tool", "run", False),  # told before the command runs
        ("tool_result", None, True),
        ("tool", "write", True),
        ("assistant", None, True),
    ]


def test_a_lens_of_its_own_overrides_the_shared_review(tmp_path: Path) -> None:
    agent = load(tmp_path)

    security = agent.run(unit(tmp_path, lens="security"))
    tests = agent.run(unit(tmp_path, lens="tests"))

    assert security.verdict == Verdict(True, concern="No input reaches a shell.")
    assert not (unit(tmp_path, lens="security").worktree / "reviewed.txt").exists()
    assert tests.verdict is not None and tests.verdict.category == "acceptance_gap"


def test_an_attempt_without_a_review_is_accepted(tmp_path: Path) -> None:
    agent = load(tmp_path)

    second = agent.run(unit(tmp_path, attempt=2))
    repeated = agent.run(unit(tmp_path, attempt=5))  # the last entry repeats

    assert second.case is Case.DONE
    assert second.verdict == Verdict(
        True, concern="the replay script gives no review of this attempt; accepted"
    )
    assert repeated.verdict == second.verdict


def test_a_reviewer_that_breaks_is_an_error(tmp_path: Path) -> None:
    outcome = load(tmp_path).run(unit(tmp_path, task="T-003"))

    assert (outcome.case, outcome.failure) == (Case.ERROR, "the reviewer's model went away")
    assert outcome.verdict is None


def test_a_task_without_entries_is_an_error_for_the_reviewer_too(tmp_path: Path) -> None:
    outcome = load(tmp_path).run(unit(tmp_path, task="T-404"))

    assert (outcome.case, outcome.failure) == (
        Case.ERROR,
        "the replay script has no entry for T-404",
    )


def test_the_worker_still_gets_its_attempt(tmp_path: Path) -> None:
    work = unit(tmp_path, role=Role.IMPLEMENTER)

    outcome = load(tmp_path).run(work)

    assert (outcome.case, outcome.resolution, outcome.verdict) == (
        Case.DONE,
        "Added count().",
        None,
    )
    assert (work.worktree / "wc.py").exists()
    assert not (work.worktree / "reviewed.txt").exists()


def test_a_json_script_of_the_same_shape_works(tmp_path: Path) -> None:
    path = tmp_path / "replay.json"
    review = {"verdict": "reject", "category": "weak_test", "concern": "c", "next_step": "n"}
    path.write_text(json.dumps({"tasks": {"T-002": [{"outcome": "done", "review": review}]}}))

    outcome = ReplayAgent.load(path).run(unit(tmp_path))

    assert outcome.verdict == Verdict(False, "weak_test", "c", [], "n")


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ({"review": "accept"}, "tasks.T-002.review must be a table (fix:"),
        (
            {"review": {"verdict": "reject", "concern": "Wrong."}},
            "tasks.T-002.review: a reject needs a category, one of acceptance_gap",
        ),
        ({"review": {"concern": "fine"}}, "tasks.T-002.review: verdict must be accept or reject"),
        (
            {"review": {"verdict": "accept", "outcome": "question"}},
            "tasks.T-002.review: outcome 'question' (fix: leave it out",
        ),
        (
            {"review": {"verdict": "accept", "actions": [{"run": ["true"], "write": "x"}]}},
            "tasks.T-002.review: an action needs exactly one of write, edit",
        ),
        (
            {"review": {"verdict": "accept", "actions": "pytest"}},
            "tasks.T-002.review: actions must be a list of tables (fix:",
        ),
        (
            {"tokens_thinking": "lots"},
            "tasks.T-002: tokens_thinking must be a number",
        ),
        (
            {"review": {"verdict": "accept", "tokens_in": "many"}},
            "tasks.T-002.review: tokens_in must be a number",
        ),
        ({"reviews": ["security"]}, "tasks.T-002.reviews must be a table of lenses (fix:"),
        (
            {"reviews": {"style": {"verdict": "accept"}}},
            "tasks.T-002.reviews: no lens 'style' (fix: use one of general, correctness, tests",
        ),
        (
            {"reviews": {"security": {"verdict": "reject", "category": "scope_creep"}}},
            "tasks.T-002.reviews.security: a reject needs a concern",
        ),
    ],
)
def test_an_unusable_review_is_refused_at_load_in_one_line(
    tmp_path: Path, entry: dict[str, Any], said: str
) -> None:
    path = tmp_path / "replay.json"
    path.write_text(json.dumps({"tasks": {"T-002": [{"outcome": "done", **entry}]}}))

    with pytest.raises(ScriptError) as refused:
        ReplayAgent.load(path)

    message = str(refused.value)
    assert message.startswith(f"replay script {path}: ")
    assert said in message
    assert "(fix:" in message and "\n" not in message
