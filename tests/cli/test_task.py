"""`taskhand task create` and `task show`: the JSON task contract becomes a task of a
contracts plan pinned to its base, runs there, and shows its state, checks and changed files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from taskhand.state.paths import StateDir
from tests.conftest import RunCli
from tests.runs import attempt, git, make_repo, script, write


def contracts(repo: Path) -> Path:
    """The default contracts plan: in the repository's state folder, not its checkout."""
    return StateDir.for_repo(repo).contracts


def seed_contract(**changes: Any) -> dict[str, Any]:
    """The seed's example, its paths and command changed to the test repository's."""
    contract: dict[str, Any] = {
        "title": "Add the mod module",
        "objective": "src/mod.py exists and imports.",
        "write_policy": "repo_write",
        "base_ref": "HEAD",
        "allowed_paths": ["src/*.py"],
        "acceptance": [
            {
                "kind": "command",
                "command": ["python3", "-c", "import src.mod; print('imported')"],
                "timeout_seconds": 180,
                "expected_exit_code": 0,
            }
        ],
        "integration_policy": "branch_only",
    }
    contract.update(changes)
    return {k: v for k, v in contract.items() if v is not None}


def contract_file(folder: Path, contract: dict[str, Any]) -> Path:
    path = folder / "contract.json"
    path.write_text(json.dumps(contract))
    return path


def test_a_contract_runs_at_its_base_and_shows_its_checks_and_changes(
    tmp_path: Path, run_cli: RunCli
) -> None:
    repo = make_repo(tmp_path / "repo", {"src/__init__.py": ""})
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "later.txt").write_text("after the base\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "later")
    path = contract_file(tmp_path, seed_contract(base_ref=None, base_sha=base))

    created = run_cli("task", "create", "--file", path, "--repo", repo, "--json")
    assert created.exit_code == 0, created.output
    made = json.loads(created.stdout)
    assert made["id"] == "T-001"
    assert Path(made["plan"]) == contracts(repo)
    text = Path(made["file"]).read_text()
    assert "paths: src/*.py" in text
    assert "(exit 0, timeout 180s)" in text
    assert f'base = "{base}"' in (contracts(repo) / "taskhand.toml").read_text()
    assert git(repo, "status", "--porcelain", "--ignored") == ""  # the checkout as it was

    replay = script(tmp_path, {"T-001": [attempt(write("src/mod.py", "VALUE = 1\n"))]})
    ran = run_cli("run", contracts(repo), "--script", replay, "--repo", repo)
    assert ran.exit_code == 0, ran.output

    shown = run_cli("task", "show", "T-001", "--plan", contracts(repo), "--repo", repo, "--json")
    assert shown.exit_code == 0, shown.output
    found = json.loads(shown.stdout)
    assert found["status"] == "DONE"
    command = found["acceptance"][0]
    assert command["command"] == ["python3", "-c", "import src.mod; print('imported')"]
    assert command["ok"] and command["exit_code"] == command["expected_exit_code"] == 0
    assert command["output"] == "imported\n"
    assert found["attempt"]["base_sha"] == base
    text = run_cli("task", "show", "T-001", "--repo", repo).stdout  # the default plan
    assert "T-001: DONE" in text and "A src/mod.py" in text
    # Only the worker's file: the run started at base_sha, not at the later HEAD.
    assert found["changed_files"] == [{"status": "A", "path": "src/mod.py"}]


def test_a_second_contract_depends_on_the_first_and_a_different_base_is_refused(
    tmp_path: Path, run_cli: RunCli
) -> None:
    repo = make_repo(tmp_path / "repo")
    first = contract_file(tmp_path, seed_contract())
    assert run_cli("task", "create", "--file", first, "--repo", repo).exit_code == 0
    second = contract_file(tmp_path, seed_contract(title="Second", depends_on=["T-001"]))
    made = run_cli("task", "create", "--file", second, "--repo", repo, "--json")
    assert json.loads(made.stdout)["id"] == "T-002"
    check = {"kind": "command", "command": ["sh", "-c", "exit 3"], "expected_exit_code": 3}
    third = contract_file(tmp_path, seed_contract(title="Third", acceptance=[check]))
    made = run_cli("task", "create", "--file", third, "--repo", repo, "--json")
    assert made.exit_code == 0, made.output
    assert (
        "`$ sh -c 'exit 3'` (exit 3, timeout 180s)"
        in Path(json.loads(made.stdout)["file"]).read_text()
    )
    sha = git(repo, "rev-parse", "HEAD").strip()
    other = contract_file(tmp_path, seed_contract(base_ref=None, base_sha=sha))
    refused = run_cli("task", "create", "--file", other, "--repo", repo)
    assert refused.exit_code != 0
    assert "base:" in refused.stderr and "--plan" in refused.stderr


def test_a_replayed_task_shows_each_check_once_with_its_argv(
    tmp_path: Path, run_cli: RunCli
) -> None:
    """Two contracts run at once: the one that lands second is replayed onto the first and
    its commands run again; `task show` gives the latest result of each check, in order."""
    repo = make_repo(tmp_path / "repo")
    for n in (1, 2):
        checks = [
            {"kind": "command", "command": ["test", "-f", f"src/m{n}.py"]},
            {"kind": "command", "command": ["sh", "-c", "exit 4"], "expected_exit_code": 4},
        ]
        made = contract_file(tmp_path, seed_contract(title=f"Module {n}", acceptance=checks))
        assert run_cli("task", "create", "--file", made, "--repo", repo).exit_code == 0
    steps = {f"T-00{n}": [attempt(write(f"src/m{n}.py", "X = 1\n"))] for n in (1, 2)}
    replay = script(tmp_path, steps)
    ran = run_cli("run", contracts(repo), "--script", replay, "--repo", repo, "--jobs", "2")
    assert ran.exit_code == 0, ran.output
    shown = [
        json.loads(run_cli("task", "show", t, "--repo", repo, "--json").stdout)
        for t in ("T-001", "T-002")
    ]
    for n, found in enumerate(shown, start=1):
        rows = [(g["name"], g.get("command"), g["ok"]) for g in found["acceptance"]]
        assert rows == [
            ("command", ["test", "-f", f"src/m{n}.py"], True),
            ("command", ["sh", "-c", "exit 4"], True),
            ("whitespace", None, True),
            ("scope", None, True),
        ]
        assert found["acceptance"][1]["exit_code"] == 4


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"title": None}, "title"),
        ({"write_policy": "read_only"}, "write_policy"),
        ({"base_ref": None, "base_sha": "0" * 40}, "base_sha"),
        ({"priority": "high"}, "priority"),
        ({"allowed_paths": ["../elsewhere/*.py"]}, "allowed_paths"),
        ({"allowed_paths": ["/etc/*"]}, "allowed_paths"),
        ({"depends_on": ["T-009"]}, "depends_on"),
        # what the plan's own rules (run/preflight.py) refuse, as `taskhand run` would
        ({"allowed_paths": [".git/hooks/*"]}, "allowed_paths"),
        ({"routing": {"agent": "no-such-agent"}}, "routing.agent"),
        (
            {"acceptance": [{"kind": "command", "command": ["no-such-program-of-taskhand"]}]},
            "acceptance[0].command",
        ),
        # what the task file cannot hold on one line
        ({"routing": {"agent": "claude\nid: T-009"}}, "routing.agent"),
        ({"routing": {"model": "m\n---"}}, "routing.model"),
        ({"allowed_paths": ["src/a b.py"]}, "allowed_paths"),
        (
            {"acceptance": [{"kind": "command", "command": ["sh", "-c", "true\n## Spec"]}]},
            "acceptance[0].command",
        ),
        ({"integration_policy": "auto_merge"}, "integration_policy"),
    ],
)
def test_a_bad_contract_is_one_line_naming_the_field_and_writes_nothing(
    tmp_path: Path, run_cli: RunCli, changes: dict[str, Any], field: str
) -> None:
    repo = make_repo(tmp_path / "repo")
    contract = seed_contract(**changes)
    if changes.get("title", "") is None:
        contract.pop("title", None)
    path = contract_file(tmp_path, contract)
    result = run_cli("task", "create", "--file", path, "--repo", repo)
    assert result.exit_code != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "contract.json" in lines[0] and f"{field}:" in lines[0] and "(fix:" in lines[0]
    assert not contracts(repo).exists()
