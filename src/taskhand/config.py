"""A run's settings, built once, in layers: defaults, then the plan's `taskhand.toml`, then
`TASKHAND_*` variables, then flags; each value checked once, here, whichever layer gave it.
Also what a run hands back (`Summary`). The CLI, a board or a remote head call `build` alike.

The plan's file, beside its overview:

    [run]                  agent, model
    [roles.evaluator]      agent, model of the reviewers
    [review]               lenses (a campaign: ["correctness", "security"]), bounces
    [prompts]              overview_bytes, plan_bytes, context_bytes, diff_bytes, ledger_entries
    [env]                  pass: names of variables the plan's agents and checks get

Every flag of `taskhand run` that is a setting has a variable: TASKHAND_ and the flag's name
(`--max-attempts` -> TASKHAND_MAX_ATTEMPTS). A task's frontmatter overrides them all.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from taskhand.errors import UserError
from taskhand.unit import LENSES

__all__ = ["LENSES", "Caps", "Flags", "PromptCaps", "RunConfig", "SettingsError", "Summary"]

FILE = "taskhand.toml"
DEFAULT_AGENT = "replay"
ENV_PREFIX = "TASKHAND_"
SANDBOXES = ("auto", "bwrap", "none")
VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
SECTIONS = ("run", "roles", "review", "prompts", "env")


@dataclass
class Caps:
    max_attempts: int = 3  # attempts that fail their machine checks
    bounces: int = 3  # attempts the reviewer rejects
    unit_seconds: float = 1800.0
    run_seconds: float | None = None
    task_tokens: int | None = None
    run_tokens: int | None = None
    task_dollars: float | None = None
    run_dollars: float | None = None


@dataclass
class PromptCaps:
    """How much of each context source a prompt may carry. Tilth's caps, in bytes: the
    overview and plan orient, they do not replace reading the code."""

    overview_bytes: int = 4096
    plan_bytes: int = 6144
    context_bytes: int = 8192  # AGENTS.md and CLAUDE.md together
    diff_bytes: int = 12288  # the reviewer's diff; the list of changed files is never cut
    ledger_entries: int = 5


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

    @property
    def evaluator_agent(self) -> str:
        return self.evaluator or self.agent

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunConfig:
        """The config a run was started with; fields newer than that run keep their defaults."""
        rest = {k: v for k, v in data.items() if k not in ("caps", "prompt_caps")}
        caps = Caps(**data.get("caps", {}))
        return cls(**rest, caps=caps, prompt_caps=PromptCaps(**data.get("prompt_caps", {})))


@dataclass(frozen=True)
class Summary:
    run_id: str
    status: str
    message: str
    run_branch: str
    repo: Path
    state: Path
    already_completed: bool = False  # the plan's latest run had completed it: nothing was done


class SettingsError(UserError, ValueError):
    """A setting that cannot be used, in whichever layer: the message names it and the fix."""


class FlagError(SettingsError):
    """A flag's value that cannot be used; `where` is the flag (a usage error at the CLI)."""


@dataclass(frozen=True)
class Flags:
    """What a command line (or a form) asks for; None where it says nothing."""

    agent: str | None = None
    model: str | None = None
    script: str | Path | None = None
    base_ref: str | None = None
    sandbox: str | None = None
    max_attempts: int | None = None
    bounces: int | None = None
    lenses: str | Sequence[str] | None = None  # a list, or names separated by commas
    evaluator: str | None = None
    evaluator_model: str | None = None
    unit_seconds: float | None = None
    run_seconds: float | None = None
    task_tokens: int | None = None
    run_tokens: int | None = None
    task_dollars: float | None = None
    run_dollars: float | None = None


# Each setting of Flags: its kind (how it is read and checked) and its flag.
_SETTINGS = {
    "agent": ("text", "--agent"),
    "model": ("text", "--model"),
    "script": ("path", "--script"),
    "base_ref": ("text", "--base"),
    "sandbox": ("sandbox", "--sandbox"),
    "max_attempts": ("count", "--max-attempts"),
    "bounces": ("count", "--bounces"),
    "lenses": ("lenses", "--review"),
    "evaluator": ("text", "--evaluator"),
    "evaluator_model": ("text", "--evaluator-model"),
    "unit_seconds": ("seconds", "--unit-timeout"),
    "run_seconds": ("seconds", "--run-timeout"),
    "task_tokens": ("count", "--task-tokens"),
    "run_tokens": ("count", "--run-tokens"),
    "task_dollars": ("dollars", "--task-dollars"),
    "run_dollars": ("dollars", "--run-dollars"),
}
_EXPECTED = {
    "count": "a whole number >= 1",
    "seconds": "a number of seconds >= 1",
    "dollars": "a number >= 0",
    "sandbox": ", ".join(SANDBOXES),
    "lenses": f"distinct names from {', '.join(LENSES)}",
}


def variable(setting: str) -> str:
    """The environment variable of a setting: TASKHAND_ and its flag's name."""
    return ENV_PREFIX + _SETTINGS[setting][1].removeprefix("--").replace("-", "_").upper()


def build(
    plan_root: Path, flags: Flags | None = None, env: Mapping[str, str] | None = None
) -> RunConfig:
    """The config for a run of the plan at `plan_root`: defaults, its taskhand.toml, the
    TASKHAND_* variables of `env` (default os.environ, read once), then `flags`."""
    data = read_file(plan_root)
    source = os.environ if env is None else env
    environ = {k: v for k, v in source.items() if k.startswith(ENV_PREFIX)}
    run_table, roles = data.get("run", {}), data.get("roles", {})
    # [run] agent and model, [review] lenses and bounces; an empty string is no value.
    from_file = {k: v for k, v in {**run_table, **data.get("review", {})}.items() if v != ""}
    above = _from_env(environ) | _from_flags(flags or Flags())
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
    )


def _defaults() -> dict[str, Any]:
    config = RunConfig()
    values = {f.name: getattr(config, f.name) for f in fields(RunConfig)}
    return values | asdict(config.caps)


def _from_env(environ: Mapping[str, str]) -> dict[str, Any]:
    """The settings the environment gives; an empty variable counts as unset."""
    found: dict[str, Any] = {}
    for setting, (kind, _) in _SETTINGS.items():
        name = variable(setting)
        raw = environ.get(name, "")
        if not raw:
            continue
        value, reason = _read(kind, raw)
        if reason:
            raise SettingsError(f"{name} = {raw!r} {reason}", fix=_fix(kind, "or unset it"))
        found[setting] = value
    return found


def _from_flags(flags: Flags) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for setting, (kind, flag) in _SETTINGS.items():
        raw = getattr(flags, setting)
        if raw is None or raw == "":  # as in the environment, an empty value is no value
            continue
        value, reason = _read(kind, raw)
        if reason:
            raise FlagError(f"{raw!r} {reason}", where=flag, fix=_fix(kind))
        found[setting] = value
    return found


def _fix(kind: str, then: str = "") -> str:
    expected = _EXPECTED.get(kind, "a value")
    return f"{expected}, {then}" if then else expected


def _read(kind: str, raw: object) -> tuple[Any, str]:
    """`raw` (text from the environment, or a flag's value) as the setting's value, and why it
    cannot be used ("" when it can)."""
    if kind == "text":
        return str(raw), ""
    if kind == "path":
        return str(Path(str(raw)).resolve()), ""
    if kind == "sandbox":
        return raw, "" if raw in SANDBOXES else "is not a sandbox taskhand knows"
    if kind == "lenses":
        items = raw.split(",") if isinstance(raw, str) else raw
        names = [str(n).strip() for n in items] if isinstance(items, Sequence) else []
        names = [n for n in names if n]
        return names, lens_problem(names)
    number = _number(raw, whole=kind == "count")
    if number is None:
        return None, "is not a whole number" if kind == "count" else "is not a number"
    least = 0 if kind == "dollars" else 1
    return number, "" if number >= least else f"is below {least}"


def _number(raw: object, whole: bool) -> float | int | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, str):
        try:
            raw = int(raw) if whole else float(raw)
        except ValueError:
            return None
    if whole and not isinstance(raw, int):
        return None
    if not isinstance(raw, int | float) or math.isnan(raw):
        return None
    return raw if whole else float(raw)


def lens_problem(names: Sequence[str]) -> str:
    """Why `names` is no campaign of reviewers, or ""."""
    unknown = [n for n in names if n not in LENSES]
    if unknown:
        return f"names {', '.join(map(repr, unknown))}, not a lens"
    if not names:
        return "names no lens"
    if len(set(names)) != len(names):
        return "names a lens twice"
    return ""


def read_file(plan_root: Path) -> dict[str, Any]:
    """The plan's settings file as checked data (empty without one); SettingsError if bad."""
    path = plan_root / FILE
    if not path.is_file():
        return {}
    import tomllib  # here, not above: most plans have no settings file to parse

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise SettingsError(f"{exc}", where=str(path), fix="correct the TOML") from None
    for section, value in data.items():
        if section not in SECTIONS or not isinstance(value, dict):
            _bad(path, section, None, f"unknown section [{section}]", f"use {', '.join(SECTIONS)}")
    for key, value in data.get("run", {}).items():
        if key not in ("agent", "model") or not isinstance(value, str):
            _bad(path, "run", key, f"[run] {key}", "[run] takes agent and model strings")
    for role, spec in data.get("roles", {}).items():
        if not isinstance(spec, dict) or any(
            k not in ("agent", "model") or not isinstance(v, str) for k, v in spec.items()
        ):
            section = f"roles.{role}"
            _bad(path, section, None, f"[{section}]", "a role takes agent and model strings")
    _check_review(path, data.get("review", {}))
    _check_prompts(path, data.get("prompts", {}))
    _check_env(path, data.get("env", {}))
    return data


def _check_review(path: Path, table: dict[str, Any]) -> None:
    for key, value in table.items():
        if key == "lenses":
            if not isinstance(value, list) or lens_problem(value):
                fix = f"a list of {_EXPECTED['lenses']}"
                _bad(path, "review", key, f"[review] lenses = {value!r}", fix)
        elif key == "bounces":
            if not _is_count(value):
                _bad(path, "review", key, f"[review] bounces = {value!r}", _EXPECTED["count"])
        else:
            _bad(path, "review", key, f"[review] {key}", "[review] takes lenses and bounces")


def _check_prompts(path: Path, table: dict[str, Any]) -> None:
    known = [f.name for f in fields(PromptCaps)]
    for key, value in table.items():
        if key not in known:
            _bad(path, "prompts", key, f"[prompts] {key}", f"use {', '.join(known)}")
        if not _is_count(value):
            _bad(path, "prompts", key, f"[prompts] {key} = {value!r}", _EXPECTED["count"])


def _check_env(path: Path, table: dict[str, Any]) -> None:
    for key, value in table.items():
        if key != "pass":
            _bad(path, "env", key, f"[env] {key}", "[env] takes pass, a list of names")
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            fix = 'a list of variable names, e.g. ["DATABASE_URL"]'
            _bad(path, "env", key, f"[env] pass = {value!r}", fix)
        for name in value:
            if not VARIABLE_NAME.fullmatch(name):
                _bad(
                    path,
                    "env",
                    key,
                    f"[env] pass names {name!r}, not a variable name",
                    "letters, digits and underscores, not starting with a digit; no $ or =",
                )
        if len(set(value)) != len(value):
            _bad(path, "env", key, "[env] pass names a variable twice", "list each once")


def _bad(path: Path, section: str, key: str | None, what: str, fix: str) -> None:
    line = line_of(path, section, key)
    raise SettingsError(what, where=f"{path}:{line}" if line else str(path), fix=fix)


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def line_of(path: Path, section: str, key: str | None = None) -> int | None:
    """The line of `key` in `[section]` (of the header itself without a key) of a TOML file
    already parsed, to place a report."""
    current = ""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped.startswith("[") and not stripped.startswith("[["):
            current = re.sub(r"[\s\"']", "", stripped.split("]")[0].lstrip("["))
            if key is None and current == section:
                return number
        elif key is not None and current == section and re.match(rf"{key}\s*=", stripped):
            return number
    return None
