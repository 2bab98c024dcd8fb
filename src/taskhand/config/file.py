"""The plan's settings file, `taskhand.toml` beside its overview, read and checked: every
mistake is reported at its file:line with the fix.
"""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path
from typing import Any

from taskhand.config.model import PromptCaps
from taskhand.config.values import (
    AUTONOMY,
    EXPECTED,
    PIPELINES,
    SettingsError,
    byte_size,
    is_count,
    lens_problem,
)
from taskhand.unit import Role

FILE = "taskhand.toml"
SECTIONS = (
    "run",
    "roles",
    "review",
    "prompts",
    "env",
    "app",
    "deliver",
    "setup",
    "clean",
    "limits",
)
# Keys above the first section: the plan's lifecycle.
TOP = {
    "pipeline": PIPELINES,
    "autonomy": AUTONOMY,
    "prototype_rounds": None,
    "jobs": None,
    "gates": None,
    "max_requeues": None,
}
APP_KEYS = {"start": str, "url": str, "ready": str, "ready_seconds": (int, float)}
DELIVER_KEYS = {"pr": bool, "remote": str, "per": str}
RUN_KEYS = {"agent": str, "model": str, "snapshot": bool, "base": str}
SETUP_KEYS = {"copy": list, "run": str, "timeout_seconds": (int, float)}
LIMIT_KEYS = ("processes", "memory", "disk", "tmp")  # each program's; 0 is no limit
CLEAN_KEYS = {"keep_done": (int, float), "keep_failed": (int, float)}  # days, for `clean`
VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


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
    for key, value in data.items():
        if key in TOP:
            _check_top(path, key, value)
        elif key not in SECTIONS or not isinstance(value, dict):
            known = ", ".join([*TOP, *(f"[{s}]" for s in SECTIONS)])
            what = f"unknown section [{key}]" if isinstance(value, dict) else f"unknown {key!r}"
            _bad(path, key, None, what, f"use {known}")
    for key, value in data.get("run", {}).items():
        if key not in RUN_KEYS or not isinstance(value, RUN_KEYS[key]):
            fix = "[run] takes agent, model and base strings, and snapshot = true or false"
            _bad(path, "run", key, f"[run] {key} = {value!r}", fix)
    roles = [str(r) for r in Role]
    for role, spec in data.get("roles", {}).items():
        section = f"roles.{role}"
        if role not in roles:
            _bad(path, section, None, f"[{section}]: no such role", f"use {', '.join(roles)}")
        if not isinstance(spec, dict) or any(
            k not in ("agent", "model") or not isinstance(v, str) for k, v in spec.items()
        ):
            _bad(path, section, None, f"[{section}]", "a role takes agent and model strings")
    _check_review(path, data.get("review", {}))
    _check_prompts(path, data.get("prompts", {}))
    _check_env(path, data.get("env", {}))
    _check_table(path, "app", data.get("app", {}), APP_KEYS)
    _check_table(path, "deliver", data.get("deliver", {}), DELIVER_KEYS)
    _check_table(path, "clean", data.get("clean", {}), CLEAN_KEYS)
    for key, days in data.get("clean", {}).items():
        if days < 0:
            _bad(path, "clean", key, f"[clean] {key} = {days!r}", "a number of days, 0 or more")
    if data.get("deliver", {}).get("per", "task") not in ("task", "run"):
        _bad(path, "deliver", "per", "[deliver] per", 'one PR per "task" or per "run"')
    _check_setup(path, data.get("setup", {}))
    _check_limits(path, data.get("limits", {}))
    return data


def _check_top(path: Path, key: str, value: object) -> None:
    choices = TOP[key]
    if choices is None:
        if not is_count(value):
            _bad(path, "", key, f"{key} = {value!r}", EXPECTED["count"])
    elif value not in choices:
        _bad(path, "", key, f"{key} = {value!r}", f"one of {', '.join(choices)}")


def _check_table(path: Path, section: str, table: dict[str, Any], keys: dict[str, Any]) -> None:
    for key, value in table.items():
        if key not in keys:
            _bad(path, section, key, f"[{section}] {key}", f"use {', '.join(keys)}")
        if not isinstance(value, keys[key]) or (keys[key] is not bool and isinstance(value, bool)):
            kind = getattr(keys[key], "__name__", "a number")
            _bad(path, section, key, f"[{section}] {key} = {value!r}", f"a {kind}")


def _check_review(path: Path, table: dict[str, Any]) -> None:
    for key, value in table.items():
        if key == "lenses":
            if not isinstance(value, list) or lens_problem(value):
                fix = f"a list of {EXPECTED['lenses']}"
                _bad(path, "review", key, f"[review] lenses = {value!r}", fix)
        elif key == "bounces":
            if not is_count(value):
                _bad(path, "review", key, f"[review] bounces = {value!r}", EXPECTED["count"])
        else:
            _bad(path, "review", key, f"[review] {key}", "[review] takes lenses and bounces")


def _check_prompts(path: Path, table: dict[str, Any]) -> None:
    known = [f.name for f in fields(PromptCaps)]
    for key, value in table.items():
        if key not in known:
            _bad(path, "prompts", key, f"[prompts] {key}", f"use {', '.join(known)}")
        if not is_count(value):
            _bad(path, "prompts", key, f"[prompts] {key} = {value!r}", EXPECTED["count"])


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


def _check_setup(path: Path, table: dict[str, Any]) -> None:
    _check_table(path, "setup", table, SETUP_KEYS)
    if table.get("timeout_seconds", 1) < 1:
        what = f"[setup] timeout_seconds = {table['timeout_seconds']!r}"
        _bad(path, "setup", "timeout_seconds", what, EXPECTED["seconds"])
    copies = table.get("copy", [])
    for entry in copies:
        problem = copy_problem(entry)
        if problem:
            _bad(path, "setup", "copy", f"[setup] copy names {entry!r}, {problem}", COPY_FIX)
    if len(set(copies)) != len(copies):
        _bad(path, "setup", "copy", "[setup] copy names a file twice", "list each once")


def _check_limits(path: Path, table: dict[str, Any]) -> None:
    for key, value in table.items():
        if key not in LIMIT_KEYS:
            _bad(path, "limits", key, f"[limits] {key}", f"use {', '.join(LIMIT_KEYS)}")
        if key == "processes" and not (is_count(value) or value == 0):
            _bad(path, "limits", key, f"[limits] processes = {value!r}", "a whole number, 0: none")
        if key != "processes" and byte_size(value) is None:
            fix = 'a size like "4 GiB" or "512 MiB", or a number of bytes (0: no limit)'
            _bad(path, "limits", key, f"[limits] {key} = {value!r}", fix)


COPY_FIX = 'a path relative to the repository\'s top folder, e.g. ".env" or "config/local.json"'


def copy_problem(entry: object) -> str:
    """Why `entry` of `[setup] copy` is not a plain path inside the repository, or ""."""
    if not isinstance(entry, str) or not entry.strip():
        return "which is not a path"
    parts = entry.split("/")
    if entry.startswith(("/", "~")):
        return "which is not a relative path"
    if ".." in parts:
        return "which leaves its folder through '..'"
    if any(p.lower() == ".git" for p in parts):
        return "which is inside .git"
    if "" in parts or "." in parts or "\\" in entry or "\0" in entry:
        return "which is not written plainly (no '.', '//', trailing '/' or backslash)"
    return ""


def _bad(path: Path, section: str, key: str | None, what: str, fix: str) -> None:
    line = line_of(path, section, key)
    raise SettingsError(what, where=f"{path}:{line}" if line else str(path), fix=fix)


def line_of(path: Path, section: str, key: str | None = None) -> int | None:
    """The line of `key` in `[section]` ("" for the keys above every section; the header
    itself without a key) of a TOML file already parsed, to place a report."""
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
