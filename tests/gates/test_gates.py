"""The machine gate: every command, then whitespace and scope, each a result with its reason."""

from __future__ import annotations

import sys
from pathlib import Path

from taskhand.gates import run_gates
from taskhand.plan.model import Check, Criterion, Task
from tests.runs import git, make_repo


def test_every_check_runs_even_after_one_fails(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    base = git(repo, "rev-parse", "HEAD").strip()
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-q", "-m", "a")
    candidate = git(repo, "rev-parse", "HEAD").strip()
    commands = [
        (sys.executable, "-c", "print('one')"),
        (sys.executable, "-c", "raise SystemExit(2)"),
        ("taskhand-no-such-program",),
        (sys.executable, "-c", "print('four')"),
    ]
    task = Task("T-1", "A", criteria=[Criterion(f"c{n}", Check(c)) for n, c in enumerate(commands)])
    results = run_gates(repo, repo, base, candidate, task, forbidden=[])
    assert [(r.name, r.ok) for r in results] == [
        ("command", True),
        ("command", False),
        ("command", False),
        ("command", True),
        ("whitespace", True),
        ("scope", True),
    ]
    assert results[3].output == "four\n"
    assert "exited 2, expected 0" in results[1].detail
    assert "program not found: taskhand-no-such-program" in results[2].detail
