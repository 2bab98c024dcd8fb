"""Helpers for the state tests: a run to hang rows on, and a second plain connection."""

from __future__ import annotations

import re
import sqlite3
from contextlib import closing
from pathlib import Path

from taskhand.state.records import Run
from taskhand.state.store import Store

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def new_run(store: Store, plan_path: str = "plans/a") -> Run:
    return store.create_run(plan_path, "markdown", "/repo", "abc123", "taskhand/run", {"jobs": 2})


def raw(db_path: Path) -> closing[sqlite3.Connection]:
    """A plain second connection, as another process would have."""
    return closing(sqlite3.connect(db_path, isolation_level=None))
