"""An author whose first plan has a cross-phase dependency and a cycle is told so, fixes both,
and its plan is written: with the replay agent and with our OpenAI loop over real HTTP."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from taskhand.plan import validate
from taskhand.plan.model import Dialect, Status
from taskhand.run import author as authoring
from taskhand.run.author_inputs import read_requirements
from taskhand.unit import Question
from tests.fakes.scripted_openai import ScriptedOpenAI, reply, tool_call
from tests.run.authoring import BAD_PLAN, files, fixed_plan, replay_script

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def no_questions(number: int, question: Question) -> authoring.Answer:
    raise AssertionError("the author asked nothing")


def request(tmp_path: Path, dialect: Dialect, **more: object) -> authoring.Request:
    repo, requirements, spec = files(tmp_path)
    found = read_requirements([requirements])
    tasktrack = dialect is Dialect.TASKTRACK
    spec_given = spec if tasktrack else None
    return authoring.Request(found, tmp_path / "out", dialect, spec=spec_given, repo=repo, **more)  # type: ignore[arg-type]


def assert_told_and_fixed(prompts: list[str], dialect: Dialect) -> None:
    assert len(prompts) == 2
    assert "What the checks found" not in prompts[0]
    told = prompts[1].split("What the checks found in your last plan")[1]
    tasktrack = dialect is Dialect.TASKTRACK
    ids = ("WCNT-2", "WCNT-3", "WCNT-4") if tasktrack else ("T-002", "T-003", "T-004")
    assert f"{ids[0]} (phase 1) depends on {ids[1]} (phase 2)" in told
    assert "dependency cycle" in told and ids[1] in told and ids[2] in told


def assert_conformant(out: Path, requirements: Path, spec: Path) -> None:
    report = validate.validate(out)
    plan = report.require()
    assert not report.problems, [p.render() for p in report.problems]
    assert plan.code == "WCNT" and [t.status for t in plan.tasks] == [Status.OPEN] * 4
    assert plan.created and TIMESTAMP.match(plan.created)
    assert all(t.updated and TIMESTAMP.match(t.updated) for t in plan.tasks)
    assert plan.resources == [str(requirements.resolve())]
    assert (out / spec.name).read_bytes() == spec.read_bytes()
    assert all(t.resolution is None and t.failure is None for t in plan.tasks)


@pytest.mark.parametrize("dialect", list(Dialect))
def test_the_replay_author_is_told_of_both_problems_and_fixes_them(
    tmp_path: Path, dialect: Dialect
) -> None:
    script = replay_script(tmp_path, {"plan": BAD_PLAN}, {"plan": fixed_plan()})
    asked = request(tmp_path, dialect, agent="replay", script=script, sandbox="none")
    steps: list[str] = []
    done = authoring.author(asked, no_questions, steps.append)
    assert_told_and_fixed(done.prompts, dialect)
    assert done.rounds == 2
    assert any("round 1: " in s and "go back to the author" in s for s in steps)
    out = tmp_path / "out"
    report = validate.validate(out)
    assert report.ok(strict=True), [p.render() for p in report.problems]
    deps = [t.dependencies for t in report.require().tasks]
    assert deps[:3] == [[], [], []] and len(deps[3]) == 1  # 4 on 3, within phase 2
    if dialect is Dialect.TASKTRACK:
        assert_conformant(out, tmp_path / "docs" / "wordcount.md", tmp_path / "TaskTrack-v1.md")
    else:
        assert "wordcount.md" in (out / "overview.md").read_text()
    [first] = [t for t in report.require().tasks if t.title == "Count words"]
    assert first.checks[0].argv == ("python", "-c", "pass")


def submit(plan: dict[str, object]) -> dict[str, object]:
    return reply(tool_calls=[tool_call("submit_plan", {"case": "done", "plan": plan})])


@pytest.mark.parametrize("dialect", list(Dialect))
def test_the_openai_author_reads_the_code_is_told_and_fixes_its_plan(
    tmp_path: Path, dialect: Dialect, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ScriptedOpenAI(
        reply(tool_calls=[tool_call("read", {"path": "wc.py"})]),
        submit(BAD_PLAN),
        submit(fixed_plan()),
    ) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test-key")
        asked = request(tmp_path, dialect, agent="openai", model="gpt-4o-mini", sandbox="none")
        done = authoring.author(asked, no_questions, lambda line: None)
    bodies = server.bodies
    offered = [t["function"]["name"] for t in bodies[0]["tools"]]
    assert offered[0] == "submit_plan" and not {"write", "edit"} & set(offered)
    # The tool read the project's file in the disposable copy.
    assert "def count(text)" in json.dumps(bodies[1]["messages"][-1])
    first_prompt, second_prompt = bodies[0]["messages"][1], bodies[2]["messages"][1]
    assert first_prompt["role"] == second_prompt["role"] == "user"
    assert_told_and_fixed([first_prompt["content"], second_prompt["content"]], dialect)
    assert done.rounds == 2
    out = tmp_path / "out"
    assert validate.validate(out).ok(strict=True)
    if dialect is Dialect.TASKTRACK:
        assert_conformant(out, tmp_path / "docs" / "wordcount.md", tmp_path / "TaskTrack-v1.md")


def test_a_submit_plan_the_loop_cannot_read_is_answered_in_the_same_unit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = {**BAD_PLAN, "phases": [{"title": "Empty", "tasks": []}]}
    with ScriptedOpenAI(submit(broken), submit(fixed_plan())) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test-key")
        asked = request(tmp_path, Dialect.MARKDOWN, agent="openai", model="m", sandbox="none")
        done = authoring.author(asked, no_questions, lambda line: None)
    answer = server.bodies[1]["messages"][-1]
    assert answer["role"] == "tool"
    assert "phases[1].tasks must be a non-empty list" in answer["content"]
    assert done.rounds == 1 and len(done.plan.tasks) == 4
