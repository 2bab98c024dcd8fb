"""An author whose first plan has a cross-phase dependency and a cycle is told so, fixes both,
and its plan is written: with the replay agent and with our OpenAI loop over real HTTP."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from taskhand.agents.cli.outcome import parse_outcome
from taskhand.errors import UserError
from taskhand.host import sandbox
from taskhand.plan import authored, validate
from taskhand.plan.model import Dialect, Status
from taskhand.run import author as authoring
from taskhand.run.author_inputs import read_requirements
from taskhand.unit import Question, Role
from tests.fakes.scripted_openai import ScriptedOpenAI, reply, tool_call
from tests.run.authoring import BAD_PLAN, files, fixed_plan, replay_script
from tests.runs import git

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def no_questions(number: int, question: Question) -> authoring.Answer:
    raise AssertionError("the author asked nothing")


def request(tmp_path: Path, dialect: Dialect, **more: object) -> authoring.Request:
    repo, requirements, spec = files(tmp_path)
    found = read_requirements([requirements])
    tasktrack = dialect is Dialect.TASKTRACK
    spec_given = spec if tasktrack else None
    return authoring.Request(found, tmp_path / "out", dialect, spec=spec_given, repo=repo, **more)


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
    assert "phase 1: tasks must be a non-empty list" in answer["content"]
    assert done.rounds == 1 and len(done.plan.tasks) == 4


def test_answers_reach_the_next_round_lettered(tmp_path: Path) -> None:
    question = {"outcome": "question", "question": "Which shell?", "options": ["bash", "zsh"]}
    script = replay_script(tmp_path, question, {"plan": fixed_plan()})
    asked = request(tmp_path, Dialect.MARKDOWN, script=script, sandbox="none", ask=True)
    seen: list[tuple[int, str]] = []

    def answer(number: int, question: Question) -> authoring.Answer:
        seen.append((number, question.text))
        return authoring.Answer("b", "the team uses it")

    done = authoring.author(asked, answer, lambda line: None)
    assert seen == [(1, "Which shell?")]
    assert "ask ONE question" in done.prompts[0]
    told = done.prompts[1].split("A person's answers to your questions")[1]
    assert "Q1: Which shell? -> (b) zsh the team uses it" in told
    assert done.interview == ["Q1: Which shell? -> (b) zsh the team uses it"]


def test_the_author_works_in_a_copy_and_never_in_the_checkout(tmp_path: Path) -> None:
    # What it writes lands in its disposable copy: the checkout stays as it was.
    entry = {"plan": fixed_plan(), "actions": [{"write": "wc.py", "text": "broken\n"}]}
    asked = request(tmp_path, Dialect.MARKDOWN, script=replay_script(tmp_path, entry))
    asked.sandbox = "none"
    authoring.author(asked, no_questions, lambda line: None)
    assert (tmp_path / "repo" / "wc.py").read_text() == "def count(text):\n    return 0\n"
    assert git(tmp_path / "repo", "status", "--porcelain") == ""


def test_an_author_that_reaches_into_the_checkout_is_stopped(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    reach = {"run": ["sh", "-c", f"echo x > {repo}/planted.txt"]}
    script = replay_script(tmp_path, {"plan": fixed_plan(), "actions": [reach]})
    asked = request(tmp_path, Dialect.MARKDOWN, script=script, sandbox="none")
    with pytest.raises(authoring.AuthorError, match=r"the author changed your checkout: .*planted"):
        authoring.author(asked, no_questions, lambda line: None)
    assert not (tmp_path / "out").exists()


def test_a_replay_script_whose_author_is_not_a_list_is_refused(tmp_path: Path) -> None:
    script = tmp_path / "author.json"
    script.write_text(json.dumps({"author": {"plan": {}}}))
    asked = request(tmp_path, Dialect.MARKDOWN, script=script, sandbox="none")
    with pytest.raises(UserError, match=r"'author' must be a list \(fix: \[\[author\]\]\)"):
        authoring.author(asked, no_questions, lambda line: None)


def test_in_the_sandbox_the_checkout_cannot_be_reached_at_all(tmp_path: Path) -> None:
    if sandbox.bwrap_problem():
        pytest.skip(f"no bwrap sandbox here: {sandbox.bwrap_problem()}")
    repo = tmp_path / "repo"
    reach = {"run": ["sh", "-c", f"echo x > {repo}/planted.txt"]}
    script = replay_script(tmp_path, {"plan": fixed_plan(), "actions": [reach]})
    asked = request(tmp_path, Dialect.MARKDOWN, script=script, sandbox="bwrap")
    done = authoring.author(asked, no_questions, lambda line: None)
    assert not (repo / "planted.txt").exists() and len(done.plan.tasks) == 4


def test_an_agent_programs_outcome_block_carries_the_plan(tmp_path: Path) -> None:
    said = (
        "I read wc.py.\n\n```json\n"
        + json.dumps({"case": "done", "resolution": fixed_plan()})
        + "\n```\n"
    )
    found = parse_outcome(said, Role.AUTHOR)
    assert not isinstance(found, str)
    frame = authored.Frame(Dialect.MARKDOWN, tmp_path / "plan", (), "")
    plan = authored.build(json.loads(found.resolution), frame)
    assert not isinstance(plan, list) and [t.id for t in plan.tasks][-1] == "T-004"


@pytest.mark.parametrize("dialect", [Dialect.TASKTRACK, Dialect.MARKDOWN])
@pytest.mark.parametrize(
    "text",
    [
        "Add main.\n\n**Note**: keep it short.\n**Status**: DONE",
        "Add main.\n\n## Acceptance criteria\n- `$ true` a criterion in disguise",
        "Add main.\n---\nid: T-009\n---\n```\n## Spec\n```",
    ],
)
def test_an_authors_text_that_looks_like_structure_is_written_as_prose(
    tmp_path: Path, dialect: Dialect, text: str
) -> None:
    tricky = fixed_plan()
    tricky["phases"][0]["tasks"][0]["description"] = text
    tricky["objective"] = f"{tricky['objective']}\n{text}"
    script = replay_script(tmp_path, {"plan": tricky})
    asked = request(tmp_path, dialect, script=script, sandbox="none", rounds=1)
    authoring.author(asked, no_questions, lambda line: None)
    plan = validate.validate(asked.out).require()
    first = plan.tasks[0]
    assert first.description.startswith(text) and first.status is Status.OPEN
    wanted = [c["text"] for c in tricky["phases"][0]["tasks"][0]["criteria"]]
    assert [c.text.removeprefix("`$ python -c pass` ") for c in first.criteria] == wanted
    if dialect is Dialect.TASKTRACK:
        assert plan.objective == tricky["objective"]


def test_an_author_that_gives_up_or_breaks_leaves_no_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gave_up = {"outcome": "failed", "failure": "the documents contradict each other"}
    asked = request(tmp_path, Dialect.MARKDOWN, script=replay_script(tmp_path, gave_up))
    asked.sandbox = "none"
    with pytest.raises(authoring.AuthorError, match="gave up: the documents contradict"):
        authoring.author(asked, no_questions, lambda line: None)
    with ScriptedOpenAI() as server:  # answers nothing: the provider refuses
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test-key")
        broken = authoring.Request(
            asked.requirements,
            asked.out,
            Dialect.MARKDOWN,
            agent="openai",
            model="m",
            repo=asked.repo,
            sandbox="none",
        )
        with pytest.raises(authoring.AuthorError, match="the author's unit failed: the provider"):
            authoring.author(broken, no_questions, lambda line: None)
    assert not (tmp_path / "out").exists()
