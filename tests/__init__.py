"""The test suite; ROOT is the repository the tests run from."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
