"""Live runs, opt-in (`pytest --live` or TASKHAND_LIVE=1): one small plan, a file written with
given content, checked by an acceptance command and reviewed, against each real agent whose key
or login is present, with the person's own home and keys. Each run costs a few cents.

Without the switch every one skips saying how to opt in; with it, an agent without a key or
login skips naming what was looked for, and one whose program is missing, how to install it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import RunCli
from tests.live import agents
from tests.plans import md_plan, md_task
from tests.runs import git, make_repo

LINE = "hello from taskhand"
TASK = (
    "## Description\n"
    f"Create the file `greeting.txt` at the top of the repository holding exactly one line, "
    f"`{LINE}`, and a newline after it. Change nothing else.\n\n"
    "## Acceptance criteria\n"
    f"- `$ grep -qx '{LINE}' greeting.txt`\n"
)


def skip_unless_ready(config: pytest.Config, agent: agents.LiveAgent) -> str | None:
    """The agent's program (None for our own loop), or a skip saying why it cannot run."""
    env = os.environ
    if not agents.opted_in(bool(config.getoption("--live")), env):
        pytest.skip(agents.OPT_IN)
    for why in (
        agents.missing_login(agent, env, Path.home()),
        agents.missing_program(agent, env),
    ):
        if why:
            pytest.skip(why)
    return agents.program(agent, env)


@pytest.mark.parametrize("agent", agents.AGENTS, ids=lambda agent: agent.name)
def test_a_small_plan_against_the_real_agent(
    agent: agents.LiveAgent,
    request: pytest.FixtureRequest,
    tmp_path: Path,
    run_cli: RunCli,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    program = skip_unless_ready(request.config, agent)
    if program is not None:  # found where ./dev installs it: put on PATH, alone of its folder
        shown = tmp_path / "bin"
        shown.mkdir()
        (shown / Path(program).name).symlink_to(program)
        monkeypatch.setenv("PATH", f"{shown}{os.pathsep}{os.environ.get('PATH', '')}")
    files = {str(k): str(v) for k, v in md_plan().items()}
    files["T-001-greeting.md"] = md_task("T-001", "Write the greeting", body=TASK)
    repo = make_repo(tmp_path / "repo", {f"plan/{k}": v for k, v in files.items()})
    model = agent.chosen_model(os.environ)
    result = run_cli(
        "run", repo / "plan", "--agent", agent.name, *(["--model", model] if model else [])
    )
    assert result.exit_code == 0, result.output
    branch = git(repo, "branch", "--list", "taskhand/run-*", "--format=%(refname:short)")
    assert git(repo, "show", f"{branch.strip()}:greeting.txt") == f"{LINE}\n"
    [task] = json.loads(run_cli("stats", "--repo", repo, "--json").output)["tasks"]
    assert task["units"] >= 2  # implemented and reviewed
    assert task["tokens_in"] > 0 and task["tokens_out"] > 0, task
