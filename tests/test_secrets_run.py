"""Planted secrets never reach a prompt, transcript, event, state file, export or the output."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import RunCli
from tests.plans import md_plan, md_task
from tests.runs import git, make_repo, script

PLANTED = {
    "MY_SERVICE_API_KEY": "sk-planted-api-key-0123456789",
    "GITHUB_TOKEN": "ghp_plantedtoken0123456789",
    "DB_PASSWORD": "planted-password-0123456789",
}


def test_planted_secrets_never_travel(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    for name, value in PLANTED.items():
        monkeypatch.setenv(name, value)
    key = PLANTED["MY_SERVICE_API_KEY"]
    body = (
        f"## Description\nCall the service with key {key} and report.\n\n"
        "## Acceptance criteria\n"
        "- `$ sh -c 'echo token=$GITHUB_TOKEN; cat notes.txt; exit 3'` (exit 3) prints nothing\n"
    )
    files = {str(k): str(v) for k, v in md_plan().items()}
    files["T-001-task.md"] = md_task("T-001", "Use the service", body=body)
    repo = make_repo(tmp_path / "repo", {f"plan/{k}": v for k, v in files.items()})
    secret_text = f"password={PLANTED['DB_PASSWORD']}\n"
    replay = script(
        tmp_path,
        {
            "T-001": [
                {
                    "actions": [
                        {"write": "notes.txt", "text": secret_text},
                        {"run": ["sh", "-c", "echo $DB_PASSWORD > env-seen.txt"]},
                    ],
                    "outcome": "done",
                    "resolution": f"Used {key} and {PLANTED['GITHUB_TOKEN']}.",
                }
            ]
        },
    )
    result = run_cli("run", repo / "plan", "--script", replay, "--json")
    assert result.exit_code == 0, result.output
    outputs = {"stdout and stderr": result.output + result.stderr}
    for path in isolated_home.rglob("*"):
        if path.is_file():
            outputs[str(path)] = path.read_bytes().decode("utf-8", "replace")
    assert any(p.endswith(".jsonl") and "transcripts" in p for p in outputs)
    assert any(p.endswith("state.db") for p in outputs)
    for where, text in outputs.items():
        for name, value in PLANTED.items():
            assert value not in text, f"{name} leaked into {where}"
    branch = git(repo, "branch", "--list", "taskhand/run-*", "--format=%(refname:short)").strip()
    assert git(repo, "show", f"{branch}:env-seen.txt") == "\n"  # the agent's commands lack them
    assert "[redacted]" in outputs["stdout and stderr"] or any(
        "[redacted]" in t for t in outputs.values()
    )
