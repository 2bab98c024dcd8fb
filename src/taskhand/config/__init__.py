"""A run's settings, built once, in layers: defaults, then the plan's `taskhand.toml`, then
`TASKHAND_*` variables, then flags; each value checked once, whichever layer gave it. The
CLI, a board or a remote head call `build` alike.

The plan's file, beside its overview:

    pipeline = "full"      default (implement, review) or full (spec to judge); autonomy,
    autonomy = "gated"     gated or full; prototype_rounds, a ui task's designer rounds;
    jobs = 4               tasks at once (a TaskTrack plan: only with --jobs or TASKHAND_JOBS)
    gates = 4              candidates whose checks run at once in the merge queue (default: jobs)
    max_requeues = 5       times a task is sent back by another task's landing before it fails
    [run]                  agent, model; snapshot = true: tasks start from a commit of the
                           checkout's uncommitted content (--snapshot)
    [roles.<role>]         agent, model of one role (evaluator, writer, planner, qa, judge, ...)
    [review]               lenses (a campaign: ["correctness", "security"]), bounces
    [prompts]              overview_bytes, plan_bytes, context_bytes, diff_bytes, ledger_entries,
                           progress_lines
    [env]                  pass: names of variables the plan's agents and checks get
    [app]                  start, url, ready, ready_seconds: the app the designer and qa use
    [deliver]              pr (true: pull requests), per (task or run), remote
    [setup]                copy (files from your checkout into each workspace), run (a command
                           run there before the agent), timeout_seconds
    [limits]               processes, memory, disk, tmp: what each agent unit, check or shell
                           command may use (sizes like "4 GiB"; 0 is no limit)

Every flag of `taskhand run` that is a setting has a variable: TASKHAND_ and the flag's name
(`--max-attempts` -> TASKHAND_MAX_ATTEMPTS). A task's frontmatter overrides them all.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from taskhand.config.file import FILE, line_of, read_file
from taskhand.config.model import (
    DEFAULT_AGENT,
    AppConfig,
    Caps,
    Delivery,
    PromptCaps,
    RunConfig,
    Setup,
    Summary,
)
from taskhand.config.values import (
    ENV_PREFIX,
    SANDBOXES,
    FlagError,
    Flags,
    SettingsError,
    byte_size,
    from_env,
    from_flags,
    lens_problem,
    variable,
)
from taskhand.unit import LENSES, Limits

__all__ = [
    "DEFAULT_AGENT",
    "ENV_PREFIX",
    "FILE",
    "LENSES",
    "SANDBOXES",
    "AppConfig",
    "Caps",
    "Delivery",
    "FlagError",
    "Flags",
    "PromptCaps",
    "RunConfig",
    "SettingsError",
    "Setup",
    "Summary",
    "build",
    "lens_problem",
    "line_of",
    "read_file",
    "variable",
]


def build(
    plan_root: Path, flags: Flags | None = None, env: Mapping[str, str] | None = None
) -> RunConfig:
    """The config for a run of the plan at `plan_root`: defaults, its taskhand.toml, the
    TASKHAND_* variables of `env` (default os.environ, read once), then `flags`."""
    data = read_file(plan_root)
    source = os.environ if env is None else env
    environ = {k: v for k, v in source.items() if k.startswith(ENV_PREFIX)}
    run_table, roles = data.get("run", {}), data.get("roles", {})
    deliver = data.get("deliver", {})
    # [run] agent and model, [review] lenses and bounces, the lifecycle's keys; an empty
    # string is no value.
    top = {
        k: data[k]
        for k in ("pipeline", "autonomy", "prototype_rounds", "jobs", "gates", "max_requeues")
        if k in data
    }
    from_file = {k: v for k, v in {**run_table, **data.get("review", {}), **top}.items() if v != ""}
    if "base" in from_file:  # [run] base: the commit a contracts plan pins its tasks to
        from_file["base_ref"] = from_file.pop("base")
    if "pr" in deliver:
        from_file["deliver"] = deliver.get("per", "task") if deliver["pr"] else "off"
    above = from_env(environ) | from_flags(flags or Flags())
    values = _defaults() | from_file | above
    # The file's model belongs to the file's agent: another agent chosen above it drops it.
    if "model" not in above and values["agent"] != run_table.get("agent", values["agent"]):
        values["model"] = None
    reviewer = roles.get("evaluator")
    if reviewer is not None:
        if "evaluator" not in above:
            values["evaluator"] = reviewer.get("agent") or values["agent"]
        if "evaluator_model" not in above:
            values["evaluator_model"] = reviewer.get("model")
    if values["jobs"] > 1 and "jobs" not in above and _tasktrack(plan_root):
        _parallel_tasktrack(plan_root, values["jobs"])
    caps = Caps(**{f.name: values[f.name] for f in fields(Caps)})
    return RunConfig(
        agent=values["agent"],
        model=values["model"],
        script=values["script"],
        base_ref=values["base_ref"],
        caps=caps,
        evaluator=values["evaluator"],
        evaluator_model=values["evaluator_model"],
        lenses=list(values["lenses"]),
        prompt_caps=PromptCaps(**data.get("prompts", {})),
        sandbox=values["sandbox"],
        env_pass=list(data.get("env", {}).get("pass", [])),
        pipeline=values["pipeline"],
        jobs=values["jobs"],
        gates=values["gates"],
        autonomy=values["autonomy"],
        routes={role: dict(spec) for role, spec in roles.items()},
        app=AppConfig(**data.get("app", {})),
        deliver=Delivery(values["deliver"], deliver.get("remote", "origin")),
        snapshot=values["snapshot"],
        setup=Setup(**data.get("setup", {})),
        limits=_limits(data.get("limits", {})),
    )


def _limits(table: dict[str, Any]) -> Limits:
    """`[limits]`, checked already: sizes in bytes."""
    sizes = {k: byte_size(v) or 0 for k, v in table.items() if k != "processes"}
    return Limits(**sizes, **{k: v for k, v in table.items() if k == "processes"})


def _tasktrack(plan_root: Path) -> bool:
    from taskhand.plan.formats import detect
    from taskhand.plan.model import Dialect

    names = [p.name for p in plan_root.iterdir()] if plan_root.is_dir() else []
    return detect(names) is Dialect.TASKTRACK


def _parallel_tasktrack(plan_root: Path, jobs: int) -> None:
    """The TaskTrack spec runs one task at a time: more only when the person running it says
    so at the command line, not a file that anyone (another executor) may read."""
    path = plan_root / FILE
    line = line_of(path, "", "jobs")
    raise SettingsError(
        f"jobs = {jobs} would run several tasks of a TaskTrack plan at once, beyond what its "
        "spec allows",
        where=f"{path}:{line}" if line else str(path),
        fix=f"give --jobs {jobs} (or {variable('jobs')}) to run them at once anyway, "
        "or take jobs out of the file",
    )


def _defaults() -> dict[str, Any]:
    config = RunConfig()
    values = {f.name: getattr(config, f.name) for f in fields(RunConfig)}
    return values | asdict(config.caps) | {"deliver": config.deliver.per}
