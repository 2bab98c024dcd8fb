"""Settings given as text or flags (TASKHAND_* variables, command-line options): which exist,
how each is read and checked, and the errors that name the one that cannot be used.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskhand.errors import UserError
from taskhand.unit import LENSES

ENV_PREFIX = "TASKHAND_"
SANDBOXES = ("auto", "bwrap", "none")
PIPELINES = ("default", "full")
AUTONOMY = ("gated", "full")
DELIVERY = ("off", "task", "run")  # no pull requests, one per task, one per run


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
    pipeline: str | None = None
    autonomy: str | None = None
    prototype_rounds: int | None = None
    deliver: str | None = None
    snapshot: bool | str | None = None
    jobs: int | None = None
    gates: int | None = None
    max_requeues: int | None = None


# Each setting of Flags: its kind (how it is read and checked) and its flag.
SETTINGS = {
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
    "pipeline": ("pipeline", "--pipeline"),
    "autonomy": ("autonomy", "--autonomy"),
    "prototype_rounds": ("count", "--prototype-rounds"),
    "deliver": ("deliver", "--deliver"),
    "snapshot": ("switch", "--snapshot"),
    "jobs": ("count", "--jobs"),
    "gates": ("count", "--gates"),
    "max_requeues": ("count", "--max-requeues"),
}
CHOICES = {"sandbox": SANDBOXES, "pipeline": PIPELINES, "autonomy": AUTONOMY, "deliver": DELIVERY}
EXPECTED = {
    "count": "a whole number >= 1",
    "seconds": "a number of seconds >= 1",
    "dollars": "a number >= 0",
    "lenses": f"distinct names from {', '.join(LENSES)}",
    "switch": "true or false (1 or 0)",
    **{kind: ", ".join(values) for kind, values in CHOICES.items()},
}


def variable(setting: str) -> str:
    """The environment variable of a setting: TASKHAND_ and its flag's name."""
    return ENV_PREFIX + SETTINGS[setting][1].removeprefix("--").replace("-", "_").upper()


def from_env(environ: Mapping[str, str]) -> dict[str, Any]:
    """The settings the environment gives; an empty variable counts as unset."""
    found: dict[str, Any] = {}
    for setting, (kind, _) in SETTINGS.items():
        name = variable(setting)
        raw = environ.get(name, "")
        if not raw:
            continue
        value, reason = read(kind, raw)
        if reason:
            raise SettingsError(f"{name} = {raw!r} {reason}", fix=fix(kind, "or unset it"))
        found[setting] = value
    return found


def from_flags(flags: Flags) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for setting, (kind, flag) in SETTINGS.items():
        raw = getattr(flags, setting)
        if raw is None or raw == "":  # as in the environment, an empty value is no value
            continue
        value, reason = read(kind, raw)
        if reason:
            raise FlagError(f"{raw!r} {reason}", where=flag, fix=fix(kind))
        found[setting] = value
    return found


def fix(kind: str, then: str = "") -> str:
    expected = EXPECTED.get(kind, "a value")
    return f"{expected}, {then}" if then else expected


def read(kind: str, raw: object) -> tuple[Any, str]:
    """`raw` (text from the environment, or a flag's value) as the setting's value, and why it
    cannot be used ("" when it can)."""
    if kind == "text":
        return str(raw), ""
    if kind == "path":
        return str(Path(str(raw)).resolve()), ""
    if kind == "switch":
        return _switch(raw)
    if kind in CHOICES:
        return raw, "" if raw in CHOICES[kind] else f"is not a {kind} taskhand knows"
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


_SWITCH_WORDS = {"1": True, "true": True, "yes": True, "on": True}
_SWITCH_WORDS |= {"0": False, "false": False, "no": False, "off": False}


def _switch(raw: object) -> tuple[Any, str]:
    if isinstance(raw, bool):
        return raw, ""
    word = _SWITCH_WORDS.get(str(raw).strip().lower())
    return (word, "") if word is not None else (None, "is not true or false")


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


_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?", re.IGNORECASE)


def byte_size(value: object) -> int | None:
    """A size in bytes from a whole number or a text like "4 GiB", "512MiB" or "2G" (powers
    of 1024); None when `value` is neither, or negative."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value >= 0 else None
    match = _SIZE.fullmatch(value.strip()) if isinstance(value, str) else None
    if match is None:
        return None
    scale = 1 << (10 * " KMGT".index(match.group(2).upper() or " "))
    return int(float(match.group(1)) * scale)


def is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1
