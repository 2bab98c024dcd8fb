"""The bookkeeping a signal never cuts short is named by module: the names must stay true."""

from __future__ import annotations

import importlib.util
import os
import signal
from pathlib import Path

import pytest

from taskhand.host.interrupts import BOOKKEEPING


def test_every_bookkeeping_module_exists() -> None:
    # A module that moved leaves its old name here matching nothing: its work would be cut short.
    missing = [name for name in BOOKKEEPING if importlib.util.find_spec(name) is None]
    assert missing == []


def test_a_signal_deferred_by_the_last_bookkeeping_is_not_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C during a write the harness finishes first (bookkeeping) is raised at the next
    checkpoint; when the block ends before one, it is raised on the way out, not dropped (a
    board beside the run would wait on forever)."""
    from taskhand.host import interrupts
    from taskhand.plan.formats import files

    monkeypatch.setattr(files, "_remember", lambda path: os.kill(os.getpid(), signal.SIGINT))
    with pytest.raises(interrupts.Interrupted) as stopped, interrupts.handled():
        files.write_atomic(tmp_path / "status.md", "DONE\n")  # the signal comes inside
    assert stopped.value.signum == signal.SIGINT
    assert (tmp_path / "status.md").read_text() == "DONE\n"  # the write was finished first
