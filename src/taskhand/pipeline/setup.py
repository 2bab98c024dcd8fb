"""An attempt's setup, before its first agent: the files `[setup] copy` names, from the user's
checkout into the workspace, then the `[setup] run` command there, confined as the agents'
commands are and watched as they are, with the workspace's $TASKHAND_PORT.

Not a stage of the pipelines: an attempt enters its pipeline where its task's lifecycle says,
and its workspace needs setting up wherever that is; so does the gate's fresh checkout of its
candidate (pipeline/gate.py). A failure fails the attempt (it counts against the task's
attempts), with the tail of the command's output as the reason.
"""

from __future__ import annotations

from pathlib import Path

from taskhand.gates.checks import run_check
from taskhand.host.allowlist import child_env
from taskhand.pipeline.harness import Harness
from taskhand.pipeline.work import Ended, Work
from taskhand.plan.model import Check
from taskhand.state.ledger import Entry, LedgerOutcome
from taskhand.state.records import AttemptStatus
from taskhand.workspace import setup_files

TAIL_LINES = 20  # of the command's output, in the reason: where installers say what broke
TAIL_CHARS = 1500


def set_up(h: Harness, work: Work, folder: Path | None = None) -> Ended | None:
    """Prepare the attempt's workspace (or `folder`, a checkout of its candidate) as
    `[setup]` says; how the attempt ended if it could not be (None when it is ready, or
    there is nothing to do)."""
    setup = h.config.setup
    if not setup.declared:
        return None
    place = folder or work.ws.path
    try:
        setup_files.copy_into(h.repo, place, setup.copy)
    except setup_files.SetupError as exc:
        return _failed(h, work, str(exc))
    if not setup.run:
        return None
    # What a check gets (the allow-list and the plan's names), and the workspace's port.
    env = {**child_env(passed=h.config.env_pass), **h.workspace_env(work.attempt.worktree)}
    command = Check(("bash", "-c", setup.run), setup.timeout_seconds)
    before = h.guard.before()
    done = run_check(command, place, env, sandbox=h.sandbox)
    broken = h.breaches(before, "the setup command", work.task.id)
    if broken:
        return h.violation(work.attempt, work.task, broken)
    if done.ok:
        return None
    reason = f"the setup command failed: {done.reason()}"
    output = "\n".join(done.output.rstrip().splitlines()[-TAIL_LINES:])[-TAIL_CHARS:]
    return _failed(h, work, f"{reason}\n{output}" if output else reason)


def _failed(h: Harness, work: Work, reason: str) -> Ended:
    entry = Entry(LedgerOutcome.SETUP_FAILED, reason)
    return h.retry(work.attempt, work.task, AttemptStatus.FAILED, reason, entry)
