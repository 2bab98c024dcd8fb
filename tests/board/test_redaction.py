"""What the board serves is redacted as every other output is: a worker that commits a GitHub
token and a password the user's environment holds, a task whose text carries an API key, a
transcript line and an event written with a token in them; no read route, the event stream
included, hands any of them to a browser."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from taskhand.state.events import EventKind
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from tests.board.test_app import call, read_events, serving
from tests.plans import md_task
from tests.runs import git, make_repo, run_plan, script, write

GITHUB = "ghp_" + "Zq8Lm3Rt7Vx2Nc5Kp9Wd4Hs6Jf1Gb0Ty8Ue"  # a classic token's shape
ANTHROPIC = "sk-ant-api03-" + "Qm7Rt2Vx9Lc4Np8Kd3Hs6Jf1Gb5Ty0Ue7Wa"
PASSWORD = "tulip-harbour-1987"  # shaped like nothing: known only as the environment's value
SECRETS = (GITHUB, ANTHROPIC, PASSWORD)


@pytest.fixture
def leaky(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[int, dict[str, int]]]:
    """A run whose worker committed secrets, over a task whose text holds one, with a raw
    transcript line and a raw event added; its board (ids of the attempt and the unit)."""
    monkeypatch.setenv("DEPLOY_PASSWORD", PASSWORD)  # in the environment the board starts in
    files = {
        "plan/overview.md": "# Config\n\n## Goal\nShip the settings.\n",
        "plan/T-001-settings.md": md_task(
            "T-001",
            "Settings",
            f"## Description\nUse the key {ANTHROPIC} from the vault.\n\n"
            "## Acceptance criteria\n- `$ test -f settings.py` passes\n",
        ),
    }
    repo = make_repo(tmp_path / "repo", files)
    work = {
        "outcome": "done",
        "actions": [
            write("settings.py", f'GITHUB_TOKEN = "{GITHUB}"\nREGION = "eu"\n'),
            write("deploy.sh", f"login --user ci --with {PASSWORD}\n"),
        ],
        "resolution": "Wrote the settings.",
    }
    summary, _ = run_plan(repo / "plan", repo, script(tmp_path, {"T-001": [work]}))
    assert summary.status == "completed"
    with Store.open(StateDir.for_repo(repo).database) as store:
        run = store.runs()[0].id
        [attempt] = store.attempts(run, "T-001")
        unit = store.units(run, "T-001")[0]
        # Written as they stand, not through the harness's redaction: what the board serves
        # must not depend on every writer having redacted.
        with Path(unit.transcript or "").open("a") as transcript:
            transcript.write(json.dumps({"role": "tool", "content": f"cloned {GITHUB}"}) + "\n")
        store.event(run, EventKind.WARNING, "T-001", message=f"push with {GITHUB} failed")
    # The commit holds the token as the worker wrote it: only what is served is redacted.
    assert GITHUB in git(repo, "show", f"{attempt.candidate_sha}:settings.py")
    with serving(repo) as port:
        yield port, {"attempt": attempt.id, "unit": unit.id}


def everything(port: int, ids: dict[str, int]) -> dict[str, Any]:
    """Each read route's answer."""
    found = {
        path: call(port, "GET", path)
        for path in (
            "/api/plan",
            "/api/tasks/T-001",
            f"/api/tasks/T-001/attempts/{ids['attempt']}/diff",
            f"/api/tasks/T-001/units/{ids['unit']}/transcript?tail=5000",
        )
    }
    assert all(status == 200 for status, _ in found.values()), found
    answers: dict[str, Any] = {path: answer for path, (_, answer) in found.items()}
    answers["/api/events"] = read_events(port, None, "warning")
    return answers


def test_no_route_serves_a_secret_from_the_plan_the_repository_or_an_agent(
    leaky: tuple[int, dict[str, int]],
) -> None:
    port, ids = leaky
    answers = everything(port, ids)
    for path, answer in answers.items():
        text = json.dumps(answer)
        for secret in SECRETS:
            assert secret[:12] not in text, (path, secret)  # nor any part of one
    # What was there is said, in place of the secret.
    diff = answers[f"/api/tasks/T-001/attempts/{ids['attempt']}/diff"]
    files = {f["path"]: f["text"] for f in diff["files"]}
    assert '+GITHUB_TOKEN = "[redacted]"' in files["settings.py"].splitlines()
    assert "+login --user ci --with [redacted]" in files["deploy.sh"].splitlines()
    [task] = answers["/api/plan"]["tasks"]
    assert "Use the key [redacted] from the vault." in task["description"]
    lines = answers[f"/api/tasks/T-001/units/{ids['unit']}/transcript?tail=5000"]["lines"]
    assert lines[-1] == {"role": "tool", "text": "cloned [redacted]"}
    warning = answers["/api/events"][-1]
    assert warning["message"] == "push with [redacted] failed"
