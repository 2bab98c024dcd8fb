"""A plan's settings, in layers: defaults, the plan's file, environment, flags.

A plan may carry `taskhand.toml` beside its overview:

    [run]                  agent, model
    [roles.evaluator]      agent, model of the reviewers
    [review]               lenses (a campaign: ["correctness", "security"]), bounces
    [prompts]              overview_bytes, plan_bytes, context_bytes, diff_bytes, ledger_entries
    [env]                  pass: names of variables the plan's agents and checks get

`TASKHAND_AGENT` and `TASKHAND_MODEL` override the file's route, command-line flags override
both, and a task's frontmatter overrides them all.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from taskhand.config import PromptCaps
from taskhand.unit import LENSES

FILE = "taskhand.toml"
DEFAULT_AGENT = "replay"
VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class SettingsError(ValueError):
    """A settings file that cannot be used; the message names it and the fix."""


@dataclass(frozen=True)
class Route:
    agent: str
    model: str | None = None


@dataclass(frozen=True)
class Routing:
    """The run's route, and the routes of roles that differ from it (e.g. the evaluator)."""

    run: Route
    roles: dict[str, Route] = field(default_factory=dict)

    def for_role(self, role: str) -> Route:
        return self.roles.get(role, self.run)


def routing(
    plan_root: Path,
    agent: str | None = None,
    model: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Routing:
    """The routing for a run of the plan at `plan_root`, flags (`agent`, `model`) winning."""
    environ = os.environ if env is None else env
    run, role_specs = _read(plan_root / FILE)
    chosen_agent = agent or environ.get("TASKHAND_AGENT") or run.get("agent") or DEFAULT_AGENT
    # The file's model belongs to the file's agent: another agent chosen above it drops it.
    file_model = run.get("model") if chosen_agent == run.get("agent", chosen_agent) else None
    chosen_model = model or environ.get("TASKHAND_MODEL") or file_model
    roles = {
        name: Route(spec.get("agent") or chosen_agent, spec.get("model"))
        for name, spec in role_specs.items()
    }
    return Routing(Route(chosen_agent, chosen_model), roles)


@dataclass(frozen=True)
class Review:
    """The file's review settings; None where it says nothing."""

    lenses: list[str] | None = None
    bounces: int | None = None


def review(plan_root: Path) -> Review:
    table = _load(plan_root / FILE).get("review", {})
    return Review(table.get("lenses"), table.get("bounces"))


def prompt_caps(plan_root: Path) -> PromptCaps:
    return PromptCaps(**_load(plan_root / FILE).get("prompts", {}))


def read_file(plan_root: Path) -> dict[str, Any]:
    """The plan's settings file as checked data (empty without one); SettingsError if bad."""
    return _load(plan_root / FILE)


def env_pass(plan_root: Path) -> list[str]:
    """The names `[env] pass` gives the plan's agents and checks, beyond the allow-list."""
    return list(_load(plan_root / FILE).get("env", {}).get("pass", []))


def _read(path: Path) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """The [run] table and the [roles.*] tables."""
    data = _load(path)
    return data.get("run", {}), data.get("roles", {})


def _load(path: Path) -> dict[str, Any]:
    """The whole file, every section checked; empty when there is no file."""
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"{path}: {exc} (fix: correct the TOML)") from None
    allowed = ("run", "roles", "review", "prompts", "env")
    for section, value in data.items():
        if section not in allowed or not isinstance(value, dict):
            raise SettingsError(
                f"{path}: unknown section [{section}] (fix: use {', '.join(allowed)})"
            )
    for key, value in data.get("run", {}).items():
        if key not in ("agent", "model") or not isinstance(value, str):
            raise SettingsError(f"{path}: [run] {key} (fix: [run] takes agent and model strings)")
    for role, spec in data.get("roles", {}).items():
        if not isinstance(spec, dict) or any(
            k not in ("agent", "model") or not isinstance(v, str) for k, v in spec.items()
        ):
            raise SettingsError(
                f"{path}: [roles.{role}] (fix: a role takes agent and model strings)"
            )
    _check_review(path, data.get("review", {}))
    _check_prompts(path, data.get("prompts", {}))
    _check_env(path, data.get("env", {}))
    return data


def _check_review(path: Path, table: dict[str, Any]) -> None:
    for key, value in table.items():
        if key == "lenses":
            if (
                not isinstance(value, list)
                or not value
                or any(v not in LENSES for v in value)
                or len(set(value)) != len(value)
            ):
                raise SettingsError(
                    f"{path}: [review] lenses = {value!r} (fix: a list of distinct names "
                    f"from {', '.join(LENSES)})"
                )
        elif key == "bounces":
            if not _count(value):
                raise SettingsError(
                    f"{path}: [review] bounces = {value!r} (fix: a whole number >= 1)"
                )
        else:
            raise SettingsError(f"{path}: [review] {key} (fix: [review] takes lenses and bounces)")


def _check_prompts(path: Path, table: dict[str, Any]) -> None:
    known = [f.name for f in fields(PromptCaps)]
    for key, value in table.items():
        if key not in known:
            raise SettingsError(f"{path}: [prompts] {key} (fix: use {', '.join(known)})")
        if not _count(value):
            raise SettingsError(f"{path}: [prompts] {key} = {value!r} (fix: a whole number >= 1)")


def _check_env(path: Path, table: dict[str, Any]) -> None:
    for key, value in table.items():
        if key != "pass":
            raise SettingsError(f"{path}: [env] {key} (fix: [env] takes pass, a list of names)")
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise SettingsError(
                f"{path}: [env] pass = {value!r} (fix: a list of variable names, "
                'e.g. ["DATABASE_URL"])'
            )
        for name in value:
            if not VARIABLE_NAME.fullmatch(name):
                raise SettingsError(
                    f"{path}: [env] pass names {name!r}, not a variable name (fix: letters, digits "
                    "and underscores, not starting with a digit; no $ or =)"
                )
        if len(set(value)) != len(value):
            raise SettingsError(f"{path}: [env] pass names a variable twice (fix: list each once)")


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
