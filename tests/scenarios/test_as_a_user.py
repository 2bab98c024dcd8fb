"""The attack suite again, as an unprivileged user. CI and containers run taskhand as root,
people as themselves: every promise of the sandbox must hold either way.

Run as root, this drops to `nobody` with setpriv and runs the attack tests there in a pytest
of their own, with a Python that user can run (the system's, on this tree's packages; the
tree is linked into a folder the user can read when its own place is not). Run as a user,
the attack tests already run as that user, and this one has nothing to add.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# One attack a test, each asserting the promise it breaks (docs/security.md lists them).
ATTACKS = (
    "tests/host/test_sandbox.py",
    "tests/host/test_launcher.py",
    "tests/scenarios/test_lifetime.py",
    "tests/scenarios/test_hostile_agents.py",
    "tests/scenarios/test_hostile_files.py",
    "tests/scenarios/test_hostile_limits.py",
    "tests/scenarios/test_committed_tree.py",
    "tests/scenarios/test_outcome_channel.py",
    "tests/agents/test_login.py",
    "tests/run/test_contract.py",
    "tests/board/test_guard.py",
)
# What the tests need of this tree besides its code: the agent programs ./dev installs.
PARTS = ("src", "tests", ".npm-agents")
USER = 65534  # nobody
SECONDS = 1800.0

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None,
    reason="runs as root, to drop to an unprivileged user with setpriv",
)


def as_user(*argv: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    drop = ["setpriv", f"--reuid={USER}", f"--regid={USER}", "--clear-groups", "--inh-caps=-all"]
    return subprocess.run(
        [*drop, "env", "-i", *(f"{k}={v}" for k, v in env.items()), *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=SECONDS,
        check=False,
    )


@pytest.fixture
def scratch() -> Iterator[Path]:
    """A folder the user owns, outside pytest's own (which only root may enter)."""
    folder = Path(tempfile.mkdtemp(prefix="taskhand-as-user-"))
    os.chmod(folder, 0o755)
    os.chown(folder, USER, USER)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def runtime(scratch: Path) -> tuple[str, Path, str]:
    """(python, the tree's root, PYTHONPATH) the user can run: this tree in place when the user
    can read it, else linked into `scratch`."""
    python = next(
        (p for p in (sys.executable, "/usr/bin/python3") if _runs(p, scratch)),
        None,
    )
    if python is None:
        pytest.fail("no Python the unprivileged user can run (fix: install python3)")
    packages = Path(next(p for p in sys.path if p.endswith("site-packages")))
    tree, site = ROOT, packages
    path = f"{tree / 'src'}:{site}"
    if not _imports(python, path, scratch):
        tree = scratch / "tree"
        for part in PARTS:
            if (ROOT / part).exists():
                _link(ROOT / part, tree / part)
        site = scratch / "site-packages"
        _link(packages, site)
        path = f"{tree / 'src'}:{site}"
        if not _imports(python, path, scratch):
            pytest.fail("the user cannot import taskhand even from a linked copy")
    return python, tree, path


def test_the_attacks_hold_as_an_unprivileged_user(scratch: Path) -> None:
    python, tree, path = runtime(scratch)
    home = scratch / "home"
    home.mkdir()
    os.chown(home, USER, USER)
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
        "HOME": str(home),
        "PYTHONPATH": path,
        "PYTHONDONTWRITEBYTECODE": "1",
        "LANG": "C.UTF-8",
    }
    # The project's addopts would make -q a -qq, which prints no summary line to read.
    pytest_args = ["-m", "pytest", "-o", "addopts=", "-q", "-p", "no:cacheprovider", *ATTACKS]
    ran = as_user(python, *pytest_args, cwd=tree, env=env)
    summary = (ran.stdout.strip().splitlines() or ["(no output)"])[-1]
    print(f"as uid {USER}: {summary}")
    assert ran.returncode == 0, f"{ran.stdout[-6000:]}\n{ran.stderr[-2000:]}"
    assert " passed" in summary and "failed" not in summary and "error" not in summary


def _runs(python: str, cwd: Path) -> bool:
    done = as_user(python, "-c", "import sys", cwd=cwd, env={"PATH": "/usr/bin:/bin"})
    return done.returncode == 0


def _imports(python: str, path: str, cwd: Path) -> bool:
    check = "import taskhand, pytest, pydantic, click"
    done = as_user(python, "-c", check, cwd=cwd, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": path})
    return done.returncode == 0


def _link(source: Path, target: Path) -> None:
    """`source` at `target`, readable by all: hard links where the file system allows (the
    folders are new, and opened up; a file's mode is its original's), else a copy."""
    target.parent.mkdir(parents=True, exist_ok=True)
    linked = subprocess.run(["cp", "-al", str(source), str(target)], capture_output=True)
    if linked.returncode != 0:
        shutil.rmtree(target, ignore_errors=True)
        shutil.copytree(source, target, symlinks=True)
        subprocess.run(["chmod", "-R", "a+rX", str(target)], check=True)
        return
    for folder, _, _ in os.walk(target):
        os.chmod(folder, 0o755)
