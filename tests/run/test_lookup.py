"""Which run a command means: the repository's state, the run named, else its latest."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskhand.run import lookup
from taskhand.state.store import Store
from tests.runs import make_repo


def test_a_repository_that_never_ran_says_how_to_start(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    assert lookup.latest(repo) == (repo, None)
    with pytest.raises(lookup.NoRunError) as caught:
        lookup.open_store(repo)
    assert str(caught.value) == f"no runs for {repo} (fix: start one with taskhand run PLAN)"


def test_the_run_named_else_the_latest(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    _, state = lookup.repository(repo)
    state.root.mkdir(parents=True)
    with Store.open(state.database) as store:
        first = store.create_run("plan", "markdown", str(repo), "abc", "", {})
        second = store.create_run("plan", "markdown", str(repo), "abc", "", {})
    newest = max(first, second, key=lambda r: (r.created, r.id))  # as the store orders runs
    root, _, store = lookup.open_store(repo)
    with store:
        assert root == repo
        assert lookup.pick(store, first.id, root).id == first.id
        assert lookup.pick(store, None, root).id == newest.id
        with pytest.raises(lookup.NoRunError, match=r"no run nope in .* taskhand runs\)$"):
            lookup.pick(store, "nope", root)
    assert lookup.latest(repo)[1] == newest
