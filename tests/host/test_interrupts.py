"""The bookkeeping a signal never cuts short is named by module: the names must stay true."""

from __future__ import annotations

import importlib.util

from taskhand.host.interrupts import BOOKKEEPING


def test_every_bookkeeping_module_exists() -> None:
    # A module that moved leaves its old name here matching nothing: its work would be cut short.
    missing = [name for name in BOOKKEEPING if importlib.util.find_spec(name) is None]
    assert missing == []
