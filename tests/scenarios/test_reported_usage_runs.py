"""A plan run by the real `claude` and `codex` programs whose servers report cache writes and
thinking (reasoning) tokens: `taskhand stats` shows the figures as each program reported them.

The programs come from `.npm-agents` (installed by `./dev test`); without them these skip.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agents.test_cli import DONE, real
from tests.conftest import RunCli
from tests.fakes import scripted_anthropic as anthropic
from tests.fakes import scripted_responses as responses
from tests.scenarios.test_run_agents import VERDICT, agent_env, plan_repo, run_claude, run_codex

PARTS = ("tokens_in", "tokens_out", "tokens_cached", "tokens_cache_write", "tokens_thinking")


def test_claudes_cache_writes_and_thinking_land_in_stats(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent_env(monkeypatch, tmp_path, real("claude"))
    repo = plan_repo(tmp_path)
    script = [
        anthropic.Turn(
            tools=[("Bash", {"command": "printf 'hi\\n' > hello.txt"})],
            input_tokens=1000,
            output_tokens=50,
            cache_creation=4000,
        ),
        anthropic.Turn(
            text=DONE,
            thinking="hello.txt holds hi now; the task is done.",
            input_tokens=200,
            output_tokens=40,
            thinking_tokens=12,
            cache_read=4000,
            cache_creation=900,
        ),
        anthropic.Turn(text=VERDICT, input_tokens=800, output_tokens=30, cache_creation=3500),
    ]
    _, stats = run_claude(run_cli, monkeypatch, repo, script)
    [task] = stats["tasks"]  # type: ignore[misc]
    # Anthropic counts input apart from the cache; we count it within: 2000 fresh, 4000 read,
    # 8400 written. Its thinking is among the output tokens.
    assert [task[k] for k in PARTS] == [14400, 120, 4000, 8400, 12]
    assert task["cost"] > 0 and task["estimated"] is False  # claude's own dollars
    assert [stats["total"][k] for k in PARTS] == [task[k] for k in PARTS]  # type: ignore[index]
    [agent] = stats["agents"]  # type: ignore[misc]
    assert (agent["agent"], agent["units"]) == ("claude", 2)
    assert [agent["usage"][k] for k in PARTS] == [task[k] for k in PARTS]
    assert agent["usage"]["cost"] == task["cost"] and not agent["usage"]["estimated"]
    text = run_cli("stats", "--repo", repo).output
    assert "cache writes" in text and "8.4k" in text and "thinking" in text


def test_codex_reasoning_and_cache_writes_land_in_stats(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent_env(monkeypatch, tmp_path, real("codex"))
    repo = plan_repo(tmp_path)
    script = [
        responses.Turn(
            calls=[("exec_command", {"cmd": "printf 'hi\\n' > hello.txt"})],
            input_tokens=1000,
            cache_write_tokens=600,
            output_tokens=50,
            reasoning_tokens=30,
        ),
        responses.Turn(
            text=DONE, input_tokens=1300, cached_tokens=900, output_tokens=40, reasoning_tokens=12
        ),
        responses.Turn(text=VERDICT, input_tokens=700, output_tokens=30, reasoning_tokens=20),
    ]
    _, stats = run_codex(run_cli, monkeypatch, repo, script)
    [task] = stats["tasks"]  # type: ignore[misc]
    [agent] = stats["agents"]  # type: ignore[misc]
    assert (agent["agent"], agent["model"], agent["units"]) == ("codex", "gpt-5", 2)
    assert [agent["usage"][k] for k in PARTS] == [3000, 120, 900, 600, 62]
    # OpenAI counts cached and written tokens within input, reasoning within output.
    assert [task[k] for k in PARTS] == [3000, 120, 900, 600, 62]
    # gpt-5 at list prices: cache writes as input (no rate of their own), reasoning as output.
    expected = ((3000 - 900) * 1.25 + 900 * 0.125 + 120 * 10.0) / 1e6
    assert task["cost"] == pytest.approx(expected) and task["estimated"] is True
    text = run_cli("stats", "--repo", repo).output
    assert "thinking" in text and "cache writes" in text
