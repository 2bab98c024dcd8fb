"""What a run works with, as plain data: its agents and routes, caps, prompt budgets, the
lifecycle it follows, the app it may start and how it delivers; and what a run hands back.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

from taskhand.unit import Limits

DEFAULT_AGENT = "replay"


@dataclass
class Caps:
    max_attempts: int = 3  # attempts that fail their machine checks
    bounces: int = 3  # attempts the reviewer rejects (qa fails and judge rejections)
    # Attempts sent back because another task's landing came first (a conflict, or checks
    # that failed only on top of it): not the worker's failures, but not endless either.
    max_requeues: int = 5
    unit_seconds: float = 1800.0
    run_seconds: float | None = None
    task_tokens: int | None = None
    run_tokens: int | None = None
    task_dollars: float | None = None
    run_dollars: float | None = None
    prototype_rounds: int = 3  # designer rounds before a ui task parks


@dataclass
class PromptCaps:
    """How much of each context source a prompt may carry. Tilth's caps, in bytes: the
    overview and plan orient, they do not replace reading the code."""

    overview_bytes: int = 4096
    plan_bytes: int = 6144
    context_bytes: int = 8192  # AGENTS.md and CLAUDE.md together
    diff_bytes: int = 12288  # the reviewer's diff; the list of changed files is never cut
    ledger_entries: int = 5
    progress_lines: int = 30  # the plan's progress channel: the last lines a worker sees


@dataclass
class AppConfig:
    """The project's app (`[app]`), which the runner, never an agent, starts for the designer
    and qa: `start` runs in the workspace with $PORT set; `ready` is polled until it answers."""

    start: str = ""
    url: str = "http://127.0.0.1:$PORT/"
    ready: str = ""  # a URL (with $PORT) that answers once the app is up; default: url
    ready_seconds: float = 60.0

    @property
    def declared(self) -> bool:
        return bool(self.start)


@dataclass
class Setup:
    """What each attempt's workspace gets before its first agent (`[setup]`): files `copy`d
    from the user's checkout (never part of a candidate), then `run` in the agents' sandbox
    within `timeout_seconds`; both see $TASKHAND_PORT, the workspace's own free port."""

    copy: list[str] = field(default_factory=list)  # paths relative to the repository's top
    run: str = ""
    timeout_seconds: float = 600.0

    @property
    def declared(self) -> bool:
        return bool(self.copy or self.run)


@dataclass
class Delivery:
    """How finished work leaves the run (`[deliver]`, `--deliver`): `per` task or run as pull
    requests pushed to `remote`, or "off" (the run branch is the result)."""

    per: str = "off"  # off, task, run
    remote: str = "origin"
    # The branch pull requests go into, as the run's preflight named it ("": the run's base
    # names it when delivery begins); kept in the run's record, so a resumed run agrees.
    base: str = ""

    @property
    def on(self) -> bool:
        return self.per != "off"

    @property
    def per_task(self) -> bool:
        return self.per == "task"

    @property
    def per_run(self) -> bool:
        return self.per == "run"


@dataclass
class RunConfig:
    """What a run works with, kept in its record so a resumed run goes on as it started."""

    agent: str = DEFAULT_AGENT
    model: str | None = None
    script: str | None = None
    base_ref: str = "HEAD"
    caps: Caps = field(default_factory=Caps)
    evaluator: str | None = None  # the reviewers' agent, when not the run's own
    evaluator_model: str | None = None
    lenses: list[str] = field(default_factory=lambda: ["general"])
    prompt_caps: PromptCaps = field(default_factory=PromptCaps)
    sandbox: str = "auto"  # auto, bwrap or none: what confines the agents' processes
    # Names of variables the plan gives its agents and checks (`[env] pass`); names, never values.
    env_pass: list[str] = field(default_factory=list)
    pipeline: str = "default"  # default or full: the stages a task goes through
    jobs: int = 1  # tasks at once, each in its own workspace
    # Candidates checked at once in the merge queue (pipeline/queue.py); 0: as many as jobs.
    gates: int = 0
    autonomy: str = "gated"  # gated: a person approves plans and prototypes; full: they pass
    # Each role's agent and model where the plan routes it (`[roles.planner] agent = ...`).
    routes: dict[str, dict[str, str]] = field(default_factory=dict)
    app: AppConfig = field(default_factory=AppConfig)
    deliver: Delivery = field(default_factory=Delivery)
    # Tasks start from a commit of the checkout's uncommitted content (`--snapshot`), not HEAD.
    snapshot: bool = False
    setup: Setup = field(default_factory=Setup)
    # What each confined program may use (`[limits]`): processes, memory, disk.
    limits: Limits = field(default_factory=Limits)

    @property
    def evaluator_agent(self) -> str:
        return self.evaluator or self.agent

    def route(self, role: str) -> tuple[str | None, str | None]:
        """The agent and model the plan gives `role`, or None for each it leaves alone."""
        spec = self.routes.get(role, {})
        return spec.get("agent") or None, spec.get("model") or None

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunConfig:
        """The config a run was started with; fields newer than that run keep their defaults."""
        loaded: RunConfig = _load(cls, data)
        return loaded


def _load(cls: type, data: dict[str, Any]) -> Any:
    """`cls` from its as_json() form, nested settings included; unknown keys are dropped."""
    values = {}
    for f in fields(cls):
        if f.name not in data:
            continue
        nested = f.default_factory if callable(f.default_factory) else None
        sample = nested() if nested is not None else None
        if sample is not None and is_dataclass(sample) and isinstance(data[f.name], dict):
            values[f.name] = _load(type(sample), data[f.name])
        else:
            values[f.name] = data[f.name]
    return cls(**values)


@dataclass(frozen=True)
class Summary:
    run_id: str
    status: str
    message: str
    run_branch: str
    repo: Path
    state: Path
    already_completed: bool = False  # the plan's latest run had completed it: nothing was done
