"""The executor: a unit (plain data) and a backend's name in, an outcome (plain data) out; a
backend that raises fails its unit, never the run."""

from __future__ import annotations

import pickle
from pathlib import Path

from taskhand.agents.executor import LocalExecutor
from taskhand.agents.replay import ReplayAgent
from taskhand.unit import Case, Outcome, Role, Sandbox, Unit


class Exploding:
    name = "exploding"

    def run(self, unit: Unit) -> Outcome:
        raise RuntimeError("backend bug")


def unit(worktree: Path) -> Unit:
    return Unit(Role.IMPLEMENTER, "T-001", 1, "Write a.txt.", worktree, 60.0, None, "", Sandbox())


def test_a_unit_runs_on_the_named_backend_and_both_ends_are_plain_data(tmp_path: Path) -> None:
    script = tmp_path / "replay.json"
    script.write_text(
        '{"tasks": {"T-001": [{"outcome": "done", "resolution": "wrote it",'
        ' "actions": [{"write": "a.txt", "text": "a"}]}]}}'
    )
    executor = LocalExecutor({"replay": ReplayAgent.load(script)})
    given = unit(tmp_path)
    # What crosses to an executor, and back, survives serialization unchanged.
    assert pickle.loads(pickle.dumps(given)) == given
    outcome = executor.run("replay", given)
    assert (outcome.case, outcome.resolution) == (Case.DONE, "wrote it")
    assert (tmp_path / "a.txt").read_text() == "a"
    assert pickle.loads(pickle.dumps(outcome)) == outcome
    assert executor.knows("replay") and not executor.knows("codex")


def test_a_backend_that_raises_fails_its_unit_with_the_reason(tmp_path: Path) -> None:
    outcome = LocalExecutor({"x": Exploding()}).run("x", unit(tmp_path))
    assert (outcome.case, outcome.failure) == (Case.ERROR, "the agent crashed: backend bug")
