"""Shared helpers: plan folders written from dicts, and the CLI run in-process."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from taskhand.cli.main import cli

SPEC_SOURCE = Path(__file__).resolve().parents[2] / "shared" / "seeds" / "tasktrack-spec.md"

WritePlan = Callable[..., Path]
RunCli = Callable[..., Result]


def pytest_addoption(parser: pytest.Parser) -> None:
    """`--live`: run tests/live against the real agents whose keys or logins are present."""
    parser.addoption(
        "--live",
        action="store_true",
        default=False,
        help="run tests/live: one small plan against each agent with a key or login (costs money)",
    )


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Harness state in a temporary folder, and git without the user's global config."""
    home = tmp_path / "taskhand-home"
    monkeypatch.setenv("TASKHAND_HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    return home


@pytest.fixture
def write_plan(tmp_path: Path) -> WritePlan:
    """Write {name: text or bytes} into a fresh folder and return it."""

    def write(files: dict[str, str | bytes], name: str = "plan") -> Path:
        folder = tmp_path / name
        folder.mkdir(parents=True, exist_ok=True)
        for file_name, content in files.items():
            path = folder / file_name
            if isinstance(content, bytes):
                path.write_bytes(content)
            else:
                path.write_text(content, encoding="utf-8")
        return folder

    return write


@pytest.fixture
def run_cli() -> RunCli:
    """Run `taskhand ARGS...` in-process; stdout and stderr are kept apart."""

    def run(*args: str | Path) -> Result:
        return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)

    return run
