"""A fresh state database for each test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from taskhand.state.store import Store


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "home" / "state" / "taskhand.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[Store]:
    with Store.open(db_path) as opened:
        yield opened
