"""Planted secrets never reach a prompt, transcript, event, state file, export, the output or a
branch: agents and checks get an allow-listed environment, and redaction knows secret shapes."""

from __future__ import annotations

import json
import secrets
import sqlite3
import string
import subprocess
from pathlib import Path
from typing import Any

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
    branch = git(repo, "branch", "--list", "taskhand/run-*", "--format=%(refname:short)").strip()
    # The ended attempt's workspace is kept (docs/parallel.md): the files the agent wrote
    # there are its work, byte for byte the result commit's, which holds what the agent wrote.
    [workspace] = isolated_home.glob("repos/*/runs/*/worktrees/T-001/attempt-1")
    for path in workspace.rglob("*"):
        relative = path.relative_to(workspace).as_posix()
        if path.is_file() and not relative.startswith(".git/"):
            assert outputs.pop(str(path)) == git(repo, "show", f"{branch}:{relative}"), relative
    for where, text in outputs.items():
        for name, value in PLANTED.items():
            assert value not in text, f"{name} leaked into {where}"
    assert git(repo, "show", f"{branch}:env-seen.txt") == "\n"  # the agent's commands lack them
    assert "[redacted]" in outputs["stdout and stderr"] or any(
        "[redacted]" in t for t in outputs.values()
    )


# ---- secrets under names that do not look secret

ALNUM = string.ascii_letters + string.digits


def random_text(n: int) -> str:
    return "".join(secrets.choice(ALNUM) for _ in range(n))


def plant(monkeypatch: pytest.MonkeyPatch) -> tuple[dict[str, str], list[str]]:
    """Secrets a user may well have exported, and every piece of them that must never show."""
    dsn_key = secrets.token_hex(16)
    planted = {
        "DATABASE_URL": "postgres://app:S3cretPassw0rd@db.example/app",
        "GH_PAT": "ghp_" + random_text(36),
        "SENTRY_DSN": f"https://{dsn_key}@o123.ingest.sentry.io/456",
        "MY_SETTING": "sk-proj-" + random_text(40),
        "NPM_AUTH": "npm_" + random_text(36),
    }
    for name, value in planted.items():
        monkeypatch.setenv(name, value)
    return planted, [*planted.values(), "S3cretPassw0rd", dsn_key]


def secret_plan(tmp_path: Path, criteria: str, toml: str | None = None) -> Path:
    files = {str(k): str(v) for k, v in md_plan().items()}
    body = f"## Description\nDeploy the service.\n\n## Acceptance criteria\n{criteria}"
    files["T-001-deploy.md"] = md_task("T-001", "Deploy", body=body)
    if toml is not None:
        files["taskhand.toml"] = toml
    return make_repo(tmp_path / "repo", {f"plan/{k}": v for k, v in files.items()})


def chatty_agent(tmp_path: Path, planted: dict[str, str], dump: list[str]) -> Path:
    """An agent that dumps its environment and repeats every secret in what it says."""
    said = ", ".join(planted.values())
    return script(
        tmp_path,
        {
            "T-001": [
                {
                    "actions": [
                        {"run": dump},
                        {"run": ["env"]},
                        {"write": "app.txt", "text": "ok\n"},
                    ],
                    "outcome": "done",
                    "resolution": f"Deployed with {said}.",
                    "review": {
                        "verdict": "accept",
                        "concern": f"Checked the settings {said}.",
                        "actions": [{"run": ["env"]}],
                    },
                }
            ]
        },
    )


def everything_kept(repo: Path, home: Path, run_cli: RunCli, shown: str) -> dict[str, bytes]:
    """Every output, stored byte and git object of the run, by where it is."""
    kept = {"stdout and stderr": shown.encode()}
    for path in home.rglob("*"):
        if path.is_file():
            kept[str(path)] = path.read_bytes()
    ledger = run_cli("ledger", "--repo", repo, "--json")
    assert ledger.exit_code == 0, ledger.output
    kept["taskhand ledger --json"] = (ledger.output + ledger.stderr).encode()
    kept["git log -p --all"] = git(repo, "log", "-p", "--all", "--format=%H %B").encode()
    tips = git(repo, "for-each-ref", "--format=%(refname)", "refs/heads").split()
    assert any(t.startswith("refs/heads/taskhand/run-") for t in tips)
    for tip in tips:
        kept[f"git grep {tip}"] = git(repo, "grep", "-I", "-h", "-e", ".", tip).encode()
    every_object = subprocess.run(
        ["git", "-C", str(repo), "cat-file", "--batch-all-objects", "--batch"],
        capture_output=True,
        check=True,
    )
    kept["every git object"] = every_object.stdout
    return kept


def assert_nothing_leaked(kept: dict[str, bytes], needles: list[str]) -> None:
    assert any(where.endswith("state.db") for where in kept)
    assert any("transcripts" in where and where.endswith(".jsonl") for where in kept)
    assert any(where.endswith("events.jsonl") for where in kept)
    assert any(where.endswith("task-status.json") for where in kept)
    for where, data in kept.items():
        for needle in needles:
            assert needle.encode() not in data, f"{needle[:12]}... leaked into {where}"


def gate_outputs(home: Path) -> list[str]:
    (database,) = home.rglob("state.db")
    with sqlite3.connect(database) as conn:
        return [row[0] for row in conn.execute("SELECT output FROM gates WHERE name = 'command'")]


def test_secrets_under_plain_names_reach_no_agent_check_store_or_branch(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    planted, needles = plant(monkeypatch)
    criteria = (
        "- `$ env` prints what a check is given\n"
        "- `$ printenv DATABASE_URL` (exit 1) finds no database URL\n"
    )
    repo = secret_plan(tmp_path, criteria)
    replay = chatty_agent(tmp_path, planted, ["sh", "-c", "env > env.txt"])

    result = run_cli("run", repo / "plan", "--script", replay, "--json")

    assert result.exit_code == 0, result.output
    kept = everything_kept(repo, isolated_home, run_cli, result.output + result.stderr)
    assert_nothing_leaked(kept, needles)
    branch = git(repo, "branch", "--list", "taskhand/run-*", "--format=%(refname:short)").strip()
    seen = git(repo, "show", f"{branch}:env.txt")
    assert "PATH=" in seen and "HOME=" in seen  # the agent's environment was dumped ...
    assert not [name for name in planted if f"{name}=" in seen]  # ... without them
    (env_check, _) = gate_outputs(isolated_home)
    assert "PATH=" in env_check and "DATABASE_URL" not in env_check
    finished: list[dict[str, Any]] = [
        json.loads(line) for line in result.output.splitlines() if line.startswith("{")
    ]
    said = next(e for e in finished if e.get("kind") == "task_concluded")
    assert "[redacted]" in json.dumps(said)  # the agent repeated them; the store did not


def test_a_variable_the_plan_passes_reaches_its_checks_but_never_what_is_kept(
    tmp_path: Path, run_cli: RunCli, monkeypatch: pytest.MonkeyPatch, isolated_home: Path
) -> None:
    planted, needles = plant(monkeypatch)
    criteria = (
        "- `$ printenv DATABASE_URL` the check has the database URL\n"
        "- `$ printenv GH_PAT` (exit 1) and nothing the plan did not name\n"
    )
    repo = secret_plan(tmp_path, criteria, toml='[env]\npass = ["DATABASE_URL"]\n')
    # An agent given a variable can write it anywhere: this one only counts what it was given.
    count = [
        "sh",
        "-c",
        "env | grep -c '^DATABASE_URL=' > seen.txt; env | grep -c '^GH_PAT=' >> seen.txt",
    ]
    replay = chatty_agent(tmp_path, planted, count)

    result = run_cli("run", repo / "plan", "--script", replay, "--json")

    assert result.exit_code == 0, result.output
    assert_nothing_leaked(everything_kept(repo, isolated_home, run_cli, result.output), needles)
    branch = git(repo, "branch", "--list", "taskhand/run-*", "--format=%(refname:short)").strip()
    assert git(repo, "show", f"{branch}:seen.txt") == "1\n0\n"
    printed, _ = gate_outputs(isolated_home)
    assert printed == "postgres://app:[redacted]@db.example/app\n"
