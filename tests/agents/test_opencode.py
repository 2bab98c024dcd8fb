"""The real `opencode` (npm opencode-ai, from .npm-agents or PATH) against the scripted Chat
Completions server on 127.0.0.1, through a provider in the config taskhand writes for it, with
HOME an empty folder: the prompt arrives byte for byte, a plan completes, usage lands in stats.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from taskhand.agents.cli import opencode as preset
from taskhand.agents.cli.backend import CliAgent
from taskhand.unit import Case, Role, Unit
from tests.agents.test_cli import AGENT_BIN, DONE
from tests.conftest import RunCli
from tests.fakes.scripted_openai import ScriptedOpenAI, Status, reply, tool_call
from tests.plans import md_plan, md_task
from tests.runs import git, make_repo

INSTALL = "./dev test installs it; or npm install --prefix .npm-agents opencode-ai@1.18.33"
KEY = "test-key-local"
# Quotes, backslashes and a dollar: as an argument after `--` opencode quoted and escaped them.
TRICKY = "Write \"hi\" to hello.txt, not 'hello'; keep C:\\temp\\n and `$HOME` as they are."
REJECT = {
    "verdict": "reject",
    "category": "acceptance_gap",
    "concern": "hello.txt says hello, the task asks for hi.",
    "evidence": ["hello.txt"],
    "next_step": "Write hi to hello.txt.",
}
ACCEPT = {"verdict": "accept", "concern": "hello.txt holds hi.", "evidence": ["hello.txt"]}


def verdict(block: dict[str, Any]) -> str:
    return f"Checked hello.txt.\n```json\n{json.dumps(block)}\n```"


def shell(command: str) -> dict[str, Any]:
    return tool_call("bash", {"command": command, "description": "write hello.txt"})


def usage(prompt: int, completion: int, cached: int = 0, reasoning: int = 0) -> dict[str, Any]:
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }


def user_messages(body: dict[str, Any]) -> list[str]:
    """The text of each user message; one sent in parts gives each part."""
    found = []
    for message in body["messages"]:
        if message["role"] == "user":
            content = message["content"]
            parts = [content] if isinstance(content, str) else [p["text"] for p in content]
            found += parts
    return found


def built_prompts(home: Path) -> list[tuple[int, str]]:
    """Each unit's number and the prompt taskhand built for it: its transcript's first line."""
    found = []
    for path in home.glob("repos/*/runs/*/transcripts/T-001-unit-*.jsonl"):
        first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
        assert first["role"] == "user"
        found.append((int(path.stem.rsplit("-", 1)[1]), str(first["content"])))
    assert len(found) == 4
    return found


@pytest.fixture
def opencode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """The real program on PATH, with HOME an empty folder: none of the user's config."""
    program = shutil.which("opencode", path=f"{AGENT_BIN}{os.pathsep}{os.environ['PATH']}")
    if program is None:
        pytest.skip(f"opencode is not installed (fix: {INSTALL})")
    home = tmp_path / "empty-home"
    home.mkdir()
    monkeypatch.setenv("PATH", f"{Path(program).parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("HOME", str(home))
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    return program


def test_the_config_by_role_keeps_the_key_out_and_the_workspace_config_away(
    tmp_path: Path,
) -> None:
    kwargs: dict[str, Any] = {"extra": [], "prompt": "Review.", "resume": None}
    reviewer = preset.call(
        "opencode", writing=False, model="m", base_url="", folder=tmp_path, title="t", **kwargs
    )
    settings = json.loads((tmp_path / "opencode.json").read_text())
    assert settings == {
        "autoupdate": False,
        "share": "disabled",
        "experimental": {"openTelemetry": False},
        "permission": preset.READER,
    }
    assert settings["permission"]["edit"] == "deny"
    assert reviewer.argv[-4:] == ["-m", "m", "--title", "t"] and reviewer.stdin == "Review."
    assert reviewer.env["OPENCODE_CONFIG"] == str(tmp_path / "opencode.json")
    assert reviewer.env["OPENCODE_DISABLE_PROJECT_CONFIG"] == "1"
    writer = preset.call(
        "opencode", writing=True, model="taskhand/m", base_url="http://x/v1", folder=tmp_path,
        title="t", **kwargs,
    )  # fmt: skip
    settings = json.loads((tmp_path / "opencode.json").read_text())
    assert settings["permission"] == preset.WRITER and settings["model"] == "taskhand/m"
    options = settings["provider"]["taskhand"]["options"]
    assert options == {"baseURL": "{env:OPENAI_BASE_URL}", "apiKey": "{env:OPENAI_API_KEY}"}
    assert writer.argv[5:8] == ["build", "-m", "taskhand/m"]


def test_the_prompt_reaches_the_model_byte_for_byte(tmp_path: Path, opencode: str) -> None:
    with ScriptedOpenAI(reply(DONE, usage=usage(120, 30, 20, 12))) as api:
        env = {**os.environ, "OPENAI_BASE_URL": api.url}
        work = tmp_path / "work"
        work.mkdir()
        git(work.parent, "init", "-q", str(work))
        # A config an agent could leave in the workspace: taskhand has opencode ignore it.
        elsewhere = {"provider": {"taskhand": {"options": {"baseURL": "http://127.0.0.1:9/v1"}}}}
        (work / "opencode.json").write_text(json.dumps({**elsewhere, "model": "taskhand/x"}))
        unit = Unit(Role.IMPLEMENTER, "T-001", 1, TRICKY, work, 120.0, "scripted")
        outcome = CliAgent("opencode", env=env, prices={}).run(unit)
    assert outcome.case is Case.DONE, outcome.failure
    [request] = api.requests  # no title request: taskhand names the session itself
    assert user_messages(request.body) == [TRICKY]
    assert request.body["model"] == "scripted"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    # opencode's own figures: 100 fresh + 20 read from the cache in, 18 + 12 thinking out.
    assert (outcome.usage.tokens_in, outcome.usage.tokens_out) == (120, 30)
    assert (outcome.usage.tokens_cached, outcome.usage.tokens_thinking) == (20, 12)
    # Its step_finish keeps thinking apart (12 of the 30 out); the transcript holds it as sent.
    [step] = [m for m in outcome.transcript if m.get("type") == "step-finish"]
    assert step["tokens"] == {
        "total": 150,
        "input": 100,
        "output": 18,
        "reasoning": 12,
        "cache": {"write": 0, "read": 20},
    }
    assert list((tmp_path / "empty-home").glob(".config/opencode/*.json")) == []


def test_a_plan_with_a_rejection_and_a_fix_run_by_real_opencode(
    tmp_path: Path, run_cli: RunCli, opencode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    criteria = f"## Description\n{TRICKY}\n\n## Acceptance criteria\n- `$ test -s hello.txt`\n"
    files = {str(k): str(v) for k, v in md_plan().items()}
    files["T-001-hello.md"] = md_task("T-001", "Say hi", body=criteria)
    repo = make_repo(tmp_path / "repo", {f"plan/{k}": v for k, v in files.items()})
    script = [
        reply(None, [shell("printf 'hello\\n' > hello.txt")], usage=usage(1000, 50, 200)),
        reply(DONE, usage=usage(1100, 40, 900)),
        reply(verdict(REJECT), usage=usage(800, 30)),
        reply(None, [shell("printf 'hi\\n' > hello.txt")], usage=usage(1200, 60, 100)),
        reply(DONE, usage=usage(1300, 40, 1000)),
        reply(verdict(ACCEPT), usage=usage(900, 20)),
    ]
    with ScriptedOpenAI(*script) as api:
        monkeypatch.setenv("OPENAI_BASE_URL", api.url)
        result = run_cli("run", repo / "plan", "--agent", "opencode", "--model", "gpt-5")
    assert result.exit_code == 0, result.output
    assert len(api.requests) == len(script)
    # Each unit's first request carries the prompt taskhand built for it, and nothing else.
    prompts = [prompt for _, prompt in sorted(built_prompts(tmp_path / "taskhand-home"))]
    sent = [user_messages(api.bodies[i]) for i in (0, 2, 3, 5)]
    assert [texts[0] for texts in sent] == prompts
    # opencode's plan agent (the reviewers') adds a reminder of its own after the prompt.
    assert [len(texts) for texts in sent] == [1, 2, 1, 2]
    assert sent[1][1].lstrip().startswith("<system-reminder>")
    assert TRICKY in prompts[0] and "Write hi to hello.txt." in prompts[2]
    branch = git(repo, "branch", "--list", "taskhand/run-*", "--format=%(refname:short)").strip()
    assert git(repo, "show", f"{branch}:hello.txt") == "hi\n"
    stats = json.loads(run_cli("stats", "--repo", repo, "--json").output)
    [task] = stats["tasks"]
    assert (task["units"], task["tokens_in"], task["tokens_out"], task["tokens_cached"]) == (
        4,
        6300,
        240,
        2200,
    )
    # opencode prices no model of a custom provider, so the dollars come from our table.
    assert task["cost"] > 0 and task["estimated"] is True


def test_a_provider_error_is_the_units_failure_with_its_message(
    tmp_path: Path, opencode: str
) -> None:
    with ScriptedOpenAI(Status(400, "the scripted model refuses")) as api:
        env = {**os.environ, "OPENAI_BASE_URL": api.url}
        unit = Unit(Role.IMPLEMENTER, "T-001", 1, "Write hi.", tmp_path, 120.0, "scripted")
        outcome = CliAgent("opencode", env=env, prices={}).run(unit)
    assert outcome.case is Case.ERROR
    assert "the scripted model refuses" in outcome.failure, outcome.failure
    assert len(api.requests) == 1  # a client error is not retried, nor nudged
