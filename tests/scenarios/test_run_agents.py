"""Whole plans run by the real `claude` and `codex` programs against scripted local servers.

The programs come from `.npm-agents` (installed by `./dev test`); without them these skip.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.agents.test_cli import DONE, real
from tests.conftest import RunCli
from tests.fakes import scripted_anthropic as anthropic
from tests.fakes import scripted_responses as responses
from tests.plans import md_plan, md_task
from tests.runs import git, make_repo

# The reviewer's final message: a verdict block, as the evaluator prompt asks.
VERDICT = (
    'Checked hello.txt.\n```json\n{"verdict": "accept", "concern": "hello.txt holds hi."}\n```'
)
CRITERIA = "## Description\nWrite hello.txt.\n\n## Acceptance criteria\n- `$ test -s hello.txt`\n"


def plan_repo(tmp_path: Path) -> Path:
    files = {str(k): str(v) for k, v in md_plan().items()}
    files["T-001-hello.md"] = md_task("T-001", "Say hello", body=CRITERIA)
    return make_repo(tmp_path / "repo", {f"plan/{k}": v for k, v in files.items()})


def agent_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, program: str) -> None:
    home = tmp_path / "agent-home"
    (home / ".codex").mkdir(parents=True)
    monkeypatch.setenv("PATH", f"{Path(program).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    monkeypatch.setenv("CODEX_HOME", str(home / ".codex"))
    for name in (
        "DISABLE_TELEMETRY",
        "DISABLE_ERROR_REPORTING",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
    ):
        monkeypatch.setenv(name, "1")


def finished(run_cli: RunCli, repo: Path) -> dict[str, object]:
    branch = git(repo, "branch", "--list", "taskhand/run-*", "--format=%(refname:short)").strip()
    assert git(repo, "show", f"{branch}:hello.txt") == "hi\n"
    stats: dict[str, object] = json.loads(run_cli("stats", "--repo", repo, "--json").output)
    return stats


def run_claude(
    run_cli: RunCli, monkeypatch: pytest.MonkeyPatch, repo: Path, script: list[anthropic.Turn]
) -> tuple[anthropic.ScriptedAnthropic, dict[str, object]]:
    """The plan in `repo` run by the real claude against `script`: the server, and the stats
    once hello.txt holds hi on the run branch."""
    with anthropic.ScriptedAnthropic(script) as api:
        monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key-local")
        result = run_cli("run", repo / "plan", "--agent", "claude")
    assert result.exit_code == 0, result.output
    return api, finished(run_cli, repo)


def run_codex(
    run_cli: RunCli, monkeypatch: pytest.MonkeyPatch, repo: Path, script: list[responses.Turn]
) -> tuple[responses.ScriptedResponses, dict[str, object]]:
    """The plan in `repo` run by the real codex (model gpt-5) against `script`, as run_claude."""
    with responses.ScriptedResponses(script) as api:
        monkeypatch.setenv("OPENAI_BASE_URL", api.url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key-local")
        result = run_cli("run", repo / "plan", "--agent", "codex", "--model", "gpt-5")
    assert result.exit_code == 0, result.output
    return api, finished(run_cli, repo)


def test_a_plan_run_by_real_claude(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent_env(monkeypatch, tmp_path, real("claude"))
    repo = plan_repo(tmp_path)
    script = [
        anthropic.Turn(
            tools=[("Bash", {"command": "printf 'hi\\n' > hello.txt"})],
            input_tokens=1000,
            output_tokens=50,
        ),
        anthropic.Turn(text=DONE, input_tokens=1200, output_tokens=40),
        anthropic.Turn(text=VERDICT, input_tokens=800, output_tokens=30),
    ]
    _, stats = run_claude(run_cli, monkeypatch, repo, script)
    [task] = stats["tasks"]  # type: ignore[misc]
    assert (task["units"], task["tokens_in"], task["tokens_out"]) == (2, 3000, 120)
    assert task["cost"] > 0 and task["estimated"] is False


def test_a_plan_run_by_real_codex(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent_env(monkeypatch, tmp_path, real("codex"))
    repo = plan_repo(tmp_path)
    script = [
        responses.Turn(
            calls=[("exec_command", {"cmd": "printf 'hi\\n' > hello.txt"})],
            input_tokens=1000,
            cached_tokens=200,
            output_tokens=50,
        ),
        responses.Turn(text=DONE, input_tokens=1300, cached_tokens=900, output_tokens=40),
        responses.Turn(text=VERDICT, input_tokens=700, cached_tokens=0, output_tokens=30),
    ]
    _, stats = run_codex(run_cli, monkeypatch, repo, script)
    [task] = stats["tasks"]  # type: ignore[misc]
    assert (task["units"], task["tokens_in"], task["tokens_out"], task["tokens_cached"]) == (
        2,
        3000,
        120,
        1100,
    )
    assert task["cost"] > 0 and task["estimated"] is True
