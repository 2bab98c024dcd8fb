"""What the SIGKILL campaigns share: the seed of their random kills, and the state folder."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest


@pytest.fixture
def seed() -> int:
    """Kill points are random where not chosen: set TASKHAND_TEST_SEED to replay a failure."""
    given = os.environ.get("TASKHAND_TEST_SEED")
    return int(given) if given else random.SystemRandom().randrange(2**32)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """TASKHAND_HOME for this test, for the child processes and for reading the store here."""
    folder = tmp_path / "home"
    monkeypatch.setenv("TASKHAND_HOME", str(folder))
    return folder
