"""A whole plan run by our own tool loop against a scripted Chat Completions server."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from tests.conftest import RunCli
from tests.fakes.scripted_openai import ScriptedOpenAI, reply, tool_call
from tests.plans import md_plan, md_task
from tests.runs import git, make_repo

ACCEPT = {"verdict": "accept", "concern": "The change meets the criteria.", "evidence": []}


def call(name: str, arguments: dict[str, object], tokens: int) -> dict[str, object]:
    usage = {"prompt_tokens": tokens, "completion_tokens": tokens // 10, "total_tokens": tokens}
    return reply(tool_calls=[tool_call(name, arguments)], usage=usage)


def test_run_a_plan_with_the_openai_agent(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {str(k): str(v) for k, v in md_plan(("T-001", {})).items()}
    body = "## Description\nWrite hello.txt.\n\n## Acceptance criteria\n- `$ test -s hello.txt`\n"
    files["T-001-task.md"] = md_task("T-001", "Say hello", body=body)
    repo = make_repo(tmp_path / "repo", {f"plan/{k}": v for k, v in files.items()})
    with ScriptedOpenAI(
        call("write", {"path": "hello.txt", "content": "hello\n"}, 1000),
        call("bash", {"command": "cat hello.txt"}, 1200),
        call("submit_case", {"case": "done", "resolution": "Wrote hello.txt."}, 1300),
        call("submit_verdict", ACCEPT, 2000),
    ) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test-key")
        result = run_cli("run", repo / "plan", "--agent", "openai", "--model", "gpt-4o-mini")
    assert result.exit_code == 0, result.output
    assert "TaskTrack EXIT: Plan Completed" in result.output
    branch = git(repo, "branch", "--list", "taskhand/run-*", "--format=%(refname:short)").strip()
    assert git(repo, "show", f"{branch}:hello.txt") == "hello\n"
    stats = json.loads(run_cli("stats", "--repo", repo, "--json").output)
    [task] = stats["tasks"]
    assert (task["units"], task["tokens_in"], task["tokens_out"]) == (2, 5500, 550)
    assert task["cost"] > 0 and task["estimated"] is True
    with Store.open(StateDir.for_repo(repo).database) as store:
        [unit, review] = store.units(stats["run"])
    assert (unit.role, review.role, review.lens) == ("implementer", "evaluator", "general")
    transcript = Path(str(unit.transcript)).read_text()
    assert "Write hello.txt." in transcript
    assert "sk-local-test-key" not in transcript


def test_a_task_routes_to_its_own_agent(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {str(k): str(v) for k, v in md_plan(("T-001", {})).items()}
    files["T-002-task.md"] = md_task("T-002", "Via the model", agent="openai", model="gpt-4o")
    repo = make_repo(tmp_path / "repo", {f"plan/{k}": v for k, v in files.items()})
    replay = tmp_path / "replay.json"
    replay.write_text(
        json.dumps(
            {
                "tasks": {
                    "T-001": [{"actions": [{"write": "a.txt", "text": "a\n"}]}],
                    "T-002": [{"review": ACCEPT}],  # the run's reviewer reviews every task
                }
            }
        )
    )
    with ScriptedOpenAI(
        call("write", {"path": "b.txt", "content": "b\n"}, 100),
        call("submit_case", {"case": "done", "resolution": "Wrote b.txt."}, 100),
    ) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test-key")
        result = run_cli("run", repo / "plan", "--script", replay)
        assert server.bodies[0]["model"] == "gpt-4o"
    assert result.exit_code == 0, result.output
    with Store.open(StateDir.for_repo(repo).database) as store:
        units = store.units(store.runs()[0].id)
    assert [(u.task_id, u.role, u.agent, u.model) for u in units] == [
        ("T-001", "implementer", "replay", None),
        ("T-001", "evaluator", "replay", None),
        ("T-002", "implementer", "openai", "gpt-4o"),
        ("T-002", "evaluator", "replay", None),
    ]


def test_an_unknown_agent_in_a_task_stops_the_run_before_it_starts(
    tmp_path: Path, run_cli: RunCli
) -> None:
    files = {str(k): str(v) for k, v in md_plan(("T-001", {"agent": "robot"})).items()}
    repo = make_repo(tmp_path / "repo", {f"plan/{k}": v for k, v in files.items()})
    replay = tmp_path / "replay.json"
    replay.write_text('{"tasks": {}}')
    result = run_cli("run", repo / "plan", "--script", replay)
    assert result.exit_code == 1
    assert "asks for agent 'robot', which taskhand does not have" in result.stderr
    assert git(repo, "branch", "--format=%(refname:short)").split() == ["main"]


def test_the_plan_file_routes_the_run(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {str(k): str(v) for k, v in md_plan(("T-001", {})).items()}
    files["taskhand.toml"] = '[run]\nagent = "openai"\nmodel = "gpt-4o-mini"\n'
    repo = make_repo(tmp_path / "repo", {f"plan/{k}": v for k, v in files.items()})
    with ScriptedOpenAI(
        call("write", {"path": "a.txt", "content": "a\n"}, 100),
        call("submit_case", {"case": "done", "resolution": "Wrote a.txt."}, 100),
        call("submit_verdict", ACCEPT, 100),
    ) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-local-test-key")
        result = run_cli("run", repo / "plan")
        assert server.bodies[0]["model"] == "gpt-4o-mini"
    assert result.exit_code == 0, result.output
    (repo / "plan" / "taskhand.toml").write_text("[run\n")
    broken = run_cli("run", repo / "plan", "--new")
    assert broken.exit_code == 1
    assert (
        broken.stderr.startswith("taskhand: error: ") and "(fix: correct the TOML)" in broken.stderr
    )
