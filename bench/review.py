"""Review-loop benchmark: taskhand's ``openai`` backend against Tilth on the same feature.

What it does:

* writes a small Python project (a git repository with one commit: a README, an AGENTS.md of
  about 1 KB, a package stub) holding a five-task feature in the Markdown dialect, which both
  harnesses read: ``.tilth/units/overview.md`` (about 1.5 KB) and ``T-001..T-005-*.md``
  (about 600 bytes each). The criteria are plain bullets, so neither harness runs a command;
* starts one scripted Chat Completions server (``review_server.py``) on 127.0.0.1 that
  performs the same logical actions for both: per task the worker writes the task's file
  (one call), then submits its case (one call); the evaluator submits a verdict (one call).
  ``T-002``'s first verdict is a reject (``acceptance_gap``); the worker then edits the file
  and submits again, and the second verdict accepts. Each harness gets its own tool names and
  argument shapes, read from the tool schemas it offers; the server answers from the request
  itself (tools offered, messages so far) plus the rejections given per task;
* runs each harness ``--runs`` times (default 3), each on a fresh copy of the repository,
  with its state in a temporary folder: ``tilth run <feature>`` (from ``.venv-tilth``, with
  ``TILTH_HOME``, ``TILTH_BASE_URL``, ``TILTH_API_KEY``, ``TILTH_WORKER_MODEL``) and
  ``taskhand run <feature> --agent openai --model scripted --repo <repo> --json`` (with
  ``TASKHAND_HOME``, ``OPENAI_BASE_URL``, ``OPENAI_API_KEY``), and checks that every task
  ends accepted (Tilth: its session's ``task-status.json``; taskhand: ``task_concluded``
  events with status DONE and the run's exit code 0).

Figures, per harness:

* model calls: worker, evaluator, total, and per accepted task;
* prompt bytes: the bytes of a request's ``messages`` as JSON
  (``len(json.dumps(body["messages"]).encode())``), i.e. system prompt, user prompt and the
  conversation so far, but not the tool schemas. Mean per call for worker and evaluator
  calls, the largest call, the total, and the total per accepted task. The whole request
  body (tool schemas included) is printed too, as "request bytes";
* harness wall time: from starting the harness's process to its exit, minus the time the
  server spent answering (``--delay``, default 0.05 s per call, included), so the figure is
  the harness's own time: start-up, prompt building, git, tools, its HTTP client. Median of
  the runs; calls and bytes are those of the first run (runs that differ are reported).
  Before the runs each harness's package is compiled to bytecode, as installing it does (a
  checkout run where PYTHONDONTWRITEBYTECODE is set would compile every module at each start);
* the sandbox that confined the agents' commands: taskhand's default (bubblewrap when it is
  installed) and none for Tilth, which has no sandbox. No command runs in this feature, so
  taskhand pays only for choosing it (one bwrap start, ~10 ms);
* what each prompt shows: whether the first worker prompt of each task and each evaluator
  prompt carry the overview, the other tasks, AGENTS.md, the task's description and
  criteria, the worker's case, the diff and, on the retry, the rejection.

Goal (from the issue): fewer prompt bytes per accepted task than Tilth, with the same
information shown, and no more model calls. The last line says whether it holds.

Tilth 0.2.0 needs Python 3.12+; ``./dev bench review`` installs it into ``.venv-tilth``.
Without it the bench runs taskhand alone and compares with Tilth's documented prompt caps
(overview 4 KB, plan 6 KB, context files 8 KB, diff 12 KB).

Run it with::

    .venv/bin/python bench/review.py                 # 3 runs each, 0.05 s per model call
    .venv/bin/python bench/review.py --runs 1 --delay 0
    .venv/bin/python bench/review.py --only taskhand # or --only tilth
    .venv/bin/python bench/review.py --keep /tmp/review-requests   # every request body
    .venv/bin/python bench/review.py --json          # machine-readable output
    .venv/bin/python bench/review.py --profile /tmp/review.txt   # and where taskhand's time goes
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from review_server import Request, ScriptedServer, TaskScript, find_task_id

ROOT = Path(__file__).resolve().parents[1]
FEATURE = ".tilth/units"
REJECTED = frozenset({"T-002"})
# Tilth 0.2.0's documented caps (chars): memory.py's OVERVIEW/FULL_PRD/AGENTS_MD_MAX_CHARS for the
# worker prompt, loop.py's JUDGE_DIFF_MAX_CHARS for the evaluator's (which also gets the
# context files under the same 8,000 cap, and the overview uncapped).
TILTH_CAPS = {"overview": 4000, "plan": 6000, "context files": 8000, "diff": 12000}

# -- the project and its feature ---------------------------------------------------------

README = """\
# units

A small library that converts measurements between units: lengths, masses and
temperatures, with a parser for strings such as "3.5 km" and a formatter for the results.
"""

AGENTS_MD = """\
# Project conventions

These notes are for anyone, person or agent, who changes this repository.

## Layout

- `units/` is the package. One module per kind of quantity: `length.py`, `mass.py`,
  `temperature.py`, plus `parse.py` and `format.py` for text in and out.
- `units/__init__.py` stays small: it re-exports nothing until the feature is finished.

## Code

- Python 3.11, standard library only. No third-party dependencies, ever.
- Every public function has type hints and a one-line docstring that says what it returns.
- Unit names are lower-case strings (`"km"`, `"lb"`, `"c"`); conversion tables are module
  level dicts named `FACTORS` mapping a unit to its size in the module's base unit.
- Unknown units raise `ValueError` naming the unit and listing the known ones, sorted.
- Floats are returned as computed; rounding is the formatter's job, nowhere else.

## Changes

- Keep each change to the files its task names. Do not touch `.tilth/`.
- Do not add tests in this feature; the reviewer reads the code.
"""

OVERVIEW = """\
# Unit conversions

## Goal
Give the `units` package the conversions our reporting scripts keep re-implementing: lengths
and masses between metric and imperial units, temperatures between Celsius, Fahrenheit and
Kelvin, and the text handling around them (parsing "3.5 km" and printing "3.50 km").

## Context
The package is empty apart from `units/__init__.py`. Each kind of quantity gets its own
module with a base unit: metres for length, kilograms for mass. Temperature has no common
factor and converts through Celsius. The parser and formatter sit on top of the three
conversion modules and must not duplicate their tables. AGENTS.md holds the conventions
(standard library only, `FACTORS` tables, `ValueError` for unknown units).

## Scope boundaries
- In scope: `units/length.py`, `units/mass.py`, `units/temperature.py`, `units/parse.py`,
  `units/format.py`, each with the functions its task names.
- Out of scope: a command line, locale-aware number formats, compound units (km/h), unit
  prefixes beyond those listed, and any change to `units/__init__.py`.
- Out of scope: tests. The reviewer reads the code against the criteria.

## Notes for the reviewer
- Conversions through a base unit lose a little precision; that is accepted. Results should
  be within 1e-9 relative error of the exact value.
- Negative lengths and masses make no sense for our data; the modules should refuse them
  with `ValueError` rather than return a negative quantity.
- Temperatures below absolute zero are likewise an error.
"""


@dataclass(frozen=True)
class TaskSpec:
    task_id: str
    slug: str
    title: str
    description: str
    criteria: tuple[str, ...]
    script: TaskScript


def _script(
    task_id: str,
    path: str,
    content: str,
    edit: tuple[str, str],
    summary: str,
    pointers: tuple[tuple[str, str], ...],
    concern: str = "",
    next_step: str = "",
) -> TaskScript:
    return TaskScript(task_id, path, content, *edit, summary, pointers, concern, next_step)


LENGTH = '''\
"""Lengths, in metres as the base unit."""

FACTORS = {"mm": 0.001, "cm": 0.01, "m": 1.0, "km": 1000.0, "in": 0.0254, "ft": 0.3048,
           "yd": 0.9144, "mi": 1609.344}


def to_metres(value: float, unit: str) -> float:
    """Return `value` in `unit` as metres."""
    if unit not in FACTORS:
        raise ValueError(f"unknown length unit {unit!r}; known: {', '.join(sorted(FACTORS))}")
    if value < 0:
        raise ValueError("a length cannot be negative")
    return value * FACTORS[unit]


def convert_length(value: float, unit: str, to: str) -> float:
    """Return `value` in `unit` converted to `to`."""
    metres = to_metres(value, unit)
    if to not in FACTORS:
        raise ValueError(f"unknown length unit {to!r}; known: {', '.join(sorted(FACTORS))}")
    return metres / FACTORS[to]
'''

MASS = '''\
"""Masses, in kilograms as the base unit."""

FACTORS = {"mg": 1e-6, "g": 0.001, "kg": 1.0, "t": 1000.0, "oz": 0.028349523125,
           "lb": 0.45359237, "st": 6.35029318}


def to_kilograms(value: float, unit: str) -> float:
    """Return `value` in `unit` as kilograms."""
    if unit not in FACTORS:
        raise ValueError(f"unknown mass unit {unit!r}; known: {', '.join(sorted(FACTORS))}")
    return value * FACTORS[unit]


def convert_mass(value: float, unit: str, to: str) -> float:
    """Return `value` in `unit` converted to `to`."""
    kilograms = to_kilograms(value, unit)
    if to not in FACTORS:
        raise ValueError(f"unknown mass unit {to!r}; known: {', '.join(sorted(FACTORS))}")
    return kilograms / FACTORS[to]
'''

TEMPERATURE = '''\
"""Temperatures, converted through Celsius."""

TO_CELSIUS = {"c": lambda t: t, "f": lambda t: (t - 32) * 5 / 9, "k": lambda t: t - 273.15}
FROM_CELSIUS = {"c": lambda t: t, "f": lambda t: t * 9 / 5 + 32, "k": lambda t: t + 273.15}


def convert_temperature(value: float, unit: str, to: str) -> float:
    """Return the temperature `value` in `unit` converted to `to`."""
    for name in (unit, to):
        if name not in TO_CELSIUS:
            known = ", ".join(sorted(TO_CELSIUS))
            raise ValueError(f"unknown temperature unit {name!r}; known: {known}")
    celsius = TO_CELSIUS[unit](value)
    if celsius < -273.15:
        raise ValueError("a temperature cannot be below absolute zero")
    return FROM_CELSIUS[to](celsius)
'''

PARSE = '''\
"""Quantities written as text, such as "3.5 km"."""

from units import length, mass, temperature

KINDS = {**{u: "length" for u in length.FACTORS}, **{u: "mass" for u in mass.FACTORS},
         **{u: "temperature" for u in temperature.TO_CELSIUS}}


def parse_quantity(text: str) -> tuple[float, str, str]:
    """Return (value, unit, kind) for text such as "3.5 km" or "-4 c"."""
    parts = text.split()
    if len(parts) != 2:
        raise ValueError(f"expected a number and a unit, got {text!r}")
    number, unit = parts[0], parts[1].lower()
    if unit not in KINDS:
        raise ValueError(f"unknown unit {unit!r}; known: {', '.join(sorted(KINDS))}")
    return float(number), unit, KINDS[unit]
'''

FORMAT = '''\
"""Quantities as text."""


def format_quantity(value: float, unit: str, places: int = 2) -> str:
    """Return `value` rounded to `places` decimals, a space, then `unit`."""
    if places < 0:
        raise ValueError("places cannot be negative")
    return f"{value:.{places}f} {unit}"
'''

TASKS: tuple[TaskSpec, ...] = (
    TaskSpec(
        "T-001",
        "length",
        "Length conversions",
        "Add `units/length.py` with a `FACTORS` table of lengths in metres (mm, cm, m, km, "
        "in, ft, yd, mi), `to_metres(value, unit)` and `convert_length(value, unit, to)`. "
        "Follow the conventions in AGENTS.md for unknown units. This module is the base the "
        "parser (T-004) builds on, so keep the table's keys exactly as listed.",
        (
            "convert_length(1, km, m) returns 1000.0",
            "convert_length(12, in, ft) returns 1.0 within 1e-9",
            "an unknown unit raises ValueError naming it and listing the known units",
            "a negative length raises ValueError",
        ),
        _script(
            "T-001",
            "units/length.py",
            LENGTH,
            ("    return metres / FACTORS[to]\n", "    return metres / FACTORS[to]\n"),
            "Added units/length.py with FACTORS, to_metres() and convert_length().",
            (
                ("convert_length(1, km, m) returns 1000.0", "units/length.py:convert_length()"),
                ("convert_length(12, in, ft) returns 1.0", "units/length.py:FACTORS"),
                ("unknown unit raises ValueError", "units/length.py:to_metres()"),
                ("negative length raises ValueError", "units/length.py:to_metres()"),
            ),
        ),
    ),
    TaskSpec(
        "T-002",
        "mass",
        "Mass conversions",
        "Add `units/mass.py` with a `FACTORS` table of masses in kilograms (mg, g, kg, t, "
        "oz, lb, st), `to_kilograms(value, unit)` and `convert_mass(value, unit, to)`, the "
        "same shape as `units/length.py`. Use the exact definitions: a pound is 0.45359237 kg "
        "and an ounce a sixteenth of a pound. The parser (T-004) reads this table too.",
        (
            "convert_mass(1, lb, kg) returns 0.45359237",
            "convert_mass(16, oz, lb) returns 1.0 within 1e-9",
            "an unknown unit raises ValueError naming it and listing the known units",
            "a negative mass raises ValueError",
        ),
        _script(
            "T-002",
            "units/mass.py",
            MASS,
            (
                "    return value * FACTORS[unit]\n",
                "    if value < 0:\n"
                '        raise ValueError("a mass cannot be negative")\n'
                "    return value * FACTORS[unit]\n",
            ),
            "Added units/mass.py with FACTORS, to_kilograms() and convert_mass().",
            (
                ("convert_mass(1, lb, kg) returns 0.45359237", "units/mass.py:FACTORS"),
                ("convert_mass(16, oz, lb) returns 1.0", "units/mass.py:convert_mass()"),
                ("unknown unit raises ValueError", "units/mass.py:to_kilograms()"),
                ("negative mass raises ValueError", "units/mass.py:to_kilograms()"),
            ),
            concern="A negative mass is converted instead of refused: to_kilograms() has no "
            "check on the value, so the fourth criterion is not met.",
            next_step="In units/mass.py:to_kilograms(), raise ValueError when value < 0, "
            "before the conversion.",
        ),
    ),
    TaskSpec(
        "T-003",
        "temperature",
        "Temperature conversions",
        "Add `units/temperature.py` with `convert_temperature(value, unit, to)` for the "
        "units c, f and k. Temperatures do not scale by a factor, so convert through "
        "Celsius with two small tables of functions, `TO_CELSIUS` and `FROM_CELSIUS`, keyed "
        "by unit. Refuse temperatures below absolute zero, whatever unit they are given in.",
        (
            "convert_temperature(100, c, f) returns 212.0",
            "convert_temperature(0, k, c) returns -273.15",
            "an unknown unit raises ValueError naming it and listing the known units",
            "a temperature below absolute zero raises ValueError",
        ),
        _script(
            "T-003",
            "units/temperature.py",
            TEMPERATURE,
            ("    return FROM_CELSIUS[to](celsius)\n", "    return FROM_CELSIUS[to](celsius)\n"),
            "Added units/temperature.py with convert_temperature() through Celsius.",
            (
                ("convert_temperature(100, c, f) returns 212.0", "units/temperature.py:TO_CELSIUS"),
                ("convert_temperature(0, k, c) returns -273.15", "units/temperature.py:TO_CELSIUS"),
                ("unknown unit raises ValueError", "units/temperature.py:convert_temperature()"),
                ("below absolute zero raises", "units/temperature.py:convert_temperature()"),
            ),
        ),
    ),
    TaskSpec(
        "T-004",
        "parse",
        "Parse quantities",
        "Add `units/parse.py` with `parse_quantity(text)` returning `(value, unit, kind)` for "
        'text such as "3.5 km", "12 LB" or "-4 c": a number, whitespace, a unit, with the '
        "unit lower-cased and `kind` one of length, mass or temperature. Build the unit table "
        "from the other modules' tables; do not copy them.",
        (
            'parse_quantity("3.5 km") returns (3.5, km, length)',
            'parse_quantity("12 LB") returns (12.0, lb, mass)',
            "text without exactly a number and a unit raises ValueError",
            "the unit table is built from units.length, units.mass and units.temperature",
        ),
        _script(
            "T-004",
            "units/parse.py",
            PARSE,
            ("    return float(number)", "    return float(number)"),
            "Added units/parse.py with parse_quantity() over the modules' own tables.",
            (
                ('parse_quantity("3.5 km")', "units/parse.py:parse_quantity()"),
                ('parse_quantity("12 LB")', "units/parse.py:parse_quantity()"),
                ("malformed text raises ValueError", "units/parse.py:parse_quantity()"),
                ("table built from the modules", "units/parse.py:KINDS"),
            ),
        ),
    ),
    TaskSpec(
        "T-005",
        "format",
        "Format quantities",
        "Add `units/format.py` with `format_quantity(value, unit, places=2)` that returns the "
        'value rounded to `places` decimals, one space, then the unit: "3.50 km". Rounding '
        "happens here and nowhere else (see AGENTS.md). Negative values are fine here: the "
        "formatter prints what it is given, including temperatures below zero.",
        (
            'format_quantity(3.5, km) returns "3.50 km"',
            'format_quantity(-4, c, 0) returns "-4 c"',
            "a negative number of places raises ValueError",
        ),
        _script(
            "T-005",
            "units/format.py",
            FORMAT,
            ('    return f"{value', '    return f"{value'),
            "Added units/format.py with format_quantity().",
            (
                ('format_quantity(3.5, km) returns "3.50 km"', "units/format.py:format_quantity()"),
                ('format_quantity(-4, c, 0) returns "-4 c"', "units/format.py:format_quantity()"),
                ("negative places raises ValueError", "units/format.py:format_quantity()"),
            ),
        ),
    ),
)


def task_file(spec: TaskSpec) -> str:
    criteria = "\n".join(f"- {c}" for c in spec.criteria)
    return (
        f"---\nid: {spec.task_id}\ntitle: {spec.title}\n---\n\n"
        f"## Description\n{spec.description}\n\n## Acceptance criteria\n{criteria}\n"
    )


def make_project(path: Path) -> None:
    """The repository both harnesses start from: one commit, the feature inside it."""
    files = {
        "README.md": README,
        "AGENTS.md": AGENTS_MD,
        "units/__init__.py": '"""Unit conversions."""\n',
        f"{FEATURE}/overview.md": OVERVIEW,
        **{f"{FEATURE}/{t.task_id}-{t.slug}.md": task_file(t) for t in TASKS},
    }
    for name, text in files.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    _git(path, "init", "-q", "-b", "main")
    _git(path, "add", "-A")
    _git(path, "commit", "-q", "-m", "Initial commit")


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, **_identity()}
    done = subprocess.run(
        ["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def _identity() -> dict[str, str]:
    """A committer identity when git has none configured (Tilth commits each task)."""
    found = subprocess.run(["git", "config", "user.email"], capture_output=True, text=True)
    if found.stdout.strip():
        return {}
    name, email = "review bench", "bench@example.invalid"
    return {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
    }


# -- running the harnesses ---------------------------------------------------------------


@dataclass
class Run:
    """One harness run and what the server saw of it."""

    harness: str
    ok: bool
    accepted: int
    wall: float  # the process, start to exit
    server: float  # the server's time answering its requests, delays included
    exit_code: int
    problem: str = ""
    requests: list[Request] = field(default_factory=list)
    sandbox: str = ""  # what confined the agents' commands

    @property
    def net(self) -> float:
        return self.wall - self.server


@dataclass(frozen=True)
class Harness:
    name: str
    command: Callable[[Path, Path], list[str]]  # (repo, home) -> argv
    env: Callable[[Path, str], dict[str, str]]  # (home, base_url) -> extra environment
    locate: Callable[[Path], Callable[[str], Path | None]]  # home -> task id -> workspace
    outcome: Callable[[Path, subprocess.CompletedProcess[str]], tuple[int, str]]  # accepted, why
    sandbox: Callable[[subprocess.CompletedProcess[str]], str]  # what confined its agents
    python: Path  # the interpreter it runs on, and its package: for compiling its bytecode
    package: str


def _tilth_locate(home: Path) -> Callable[[str], Path | None]:
    def locate(_task_id: str) -> Path | None:
        sessions = sorted((home / "sessions").glob("*/workspace"))
        return sessions[-1] if sessions else None

    return locate


def _tilth_outcome(home: Path, done: subprocess.CompletedProcess[str]) -> tuple[int, str]:
    statuses = sorted((home / "sessions").glob("*/task-status.json"))
    if not statuses:
        return 0, "no session task-status.json"
    status = json.loads(statuses[-1].read_text())
    accepted = sum(1 for v in status.values() if v == "done")
    if accepted != len(TASKS):
        return accepted, f"task-status.json: {status}"
    return accepted, ""


def tilth(binary: Path) -> Harness:
    return Harness(
        "tilth",
        lambda repo, _home: [str(binary), "run", str(repo / FEATURE)],
        lambda home, url: {
            "TILTH_HOME": str(home),
            "TILTH_BASE_URL": url,
            "TILTH_API_KEY": "sk-scripted",
            "TILTH_WORKER_MODEL": "scripted",
            "TILTH_ENV_FILE": str(home / "no.env"),  # never read a .env from anywhere
        },
        _tilth_locate,
        _tilth_outcome,
        lambda _done: "none",  # Tilth has no sandbox
        binary.with_name("python"),
        "tilth",
    )


def _taskhand_locate(home: Path) -> Callable[[str], Path | None]:
    def locate(task_id: str) -> Path | None:
        trees = (home / "repos").glob(f"*/runs/*/worktrees/{task_id}/attempt-*")
        found = sorted(trees, key=lambda p: int(p.name.rpartition("-")[2]))
        return found[-1] if found else None

    return locate


def _taskhand_outcome(_home: Path, done: subprocess.CompletedProcess[str]) -> tuple[int, str]:
    concluded: dict[str, str] = {}
    completed = False
    for line in done.stdout.splitlines():
        try:
            event = json.loads(line)
        except json.JSONDecodeError:
            continue
        if event.get("kind") == "task_concluded":
            concluded[str(event.get("task_id"))] = str(event.get("status"))
        if event.get("kind") == "step" and "Plan Completed" in str(event.get("message")):
            completed = True
    accepted = sum(1 for v in concluded.values() if v == "DONE")
    if accepted != len(TASKS) or not completed or done.returncode != 0:
        return accepted, f"exit {done.returncode}, concluded: {concluded}"
    return accepted, ""


def taskhand() -> Harness:
    script = Path(sys.executable).with_name("taskhand")
    argv = [str(script)] if script.exists() else [sys.executable, "-m", "taskhand"]
    return Harness(
        "taskhand",
        lambda repo, _home: [
            *argv,
            "run",
            str(repo / FEATURE),
            "--agent",
            "openai",
            "--model",
            "scripted",
            "--repo",
            str(repo),
            "--json",
        ],
        lambda home, url: {
            "TASKHAND_HOME": str(home),
            "OPENAI_BASE_URL": url,
            "OPENAI_API_KEY": "sk-scripted",
        },
        _taskhand_locate,
        _taskhand_outcome,
        _taskhand_sandbox,
        Path(sys.executable),
        "taskhand",
    )


def _taskhand_sandbox(done: subprocess.CompletedProcess[str]) -> str:
    """Its default (auto): bubblewrap, unless a warning says agents ran without a sandbox."""
    unconfined = "WITHOUT a sandbox" in done.stdout
    return "none" if unconfined else "bubblewrap"


def profiled(harness: Harness, report: Path) -> Harness:
    """`harness` run under pyinstrument (a dev dependency), its text report written to
    `report`: where the time goes, the model's waits included. Not a timed run."""
    at_python = [sys.executable, "-m", "pyinstrument", "-r", "text", "-o", str(report)]

    def command(repo: Path, home: Path) -> list[str]:
        argv = harness.command(repo, home)
        return [*at_python, "-m", "taskhand", *argv[argv.index("run") :]]

    return replace(harness, command=command)


def compile_bytecode(harness: Harness) -> None:
    """Write the harness's bytecode caches, as installing a package does. An editable
    checkout run where PYTHONDONTWRITEBYTECODE is set would otherwise compile every module at
    every start, a cost no installed harness pays."""
    script = (
        "import compileall, importlib.util, pathlib, sys;"
        f"spec = importlib.util.find_spec({harness.package!r});"
        "sys.exit(not compileall.compile_dir(pathlib.Path(spec.origin).parent, quiet=1))"
    )
    subprocess.run([str(harness.python), "-c", script], check=True, stdin=subprocess.DEVNULL)


def run_once(
    harness: Harness, server: ScriptedServer, template: Path, work: Path, timeout: float
) -> Run:
    repo, home = work / "repo", work / "home"
    shutil.copytree(template, repo, symlinks=True)
    home.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("TILTH_", "OPENAI_", "TASKHAND_", "MAX_EVALUATOR"))
    }
    env |= _identity() | harness.env(home, server.base_url)
    first = server.start(harness.name, harness.locate(home))
    began = time.perf_counter()
    try:
        done = subprocess.run(
            harness.command(repo, home),
            cwd=work,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        done = subprocess.CompletedProcess(exc.cmd, -1, out, "")
    wall = time.perf_counter() - began
    (work / "stdout.txt").write_text(done.stdout or "")
    (work / "stderr.txt").write_text(done.stderr or "")
    requests = server.requests[first:]
    accepted, problem = harness.outcome(home, done)
    sandbox = harness.sandbox(done)
    errors = [r.action for r in requests if r.action.startswith("error")]
    if errors:
        problem = "; ".join([problem, *errors]).strip("; ")
    if done.returncode == -1:
        problem = f"timed out after {timeout:g}s; {problem}"
    return Run(
        harness.name,
        not problem,
        accepted,
        wall,
        sum(r.seconds for r in requests),
        done.returncode,
        problem,
        requests,
        sandbox,
    )


# -- figures -----------------------------------------------------------------------------


def _mean(values: list[int]) -> float | None:
    return statistics.fmean(values) if values else None


def _prefix_share(requests: list[Request]) -> float | None:
    total = sum(r.prompt_bytes for r in requests)
    return sum(r.prefix_bytes for r in requests) / total if total else None


def figures(runs: list[Run]) -> dict[str, Any]:
    """The figures of one harness: calls and bytes of the first run, median wall times."""
    first = runs[0]
    worker = [r for r in first.requests if r.role == "worker"]
    evaluator = [r for r in first.requests if r.role == "evaluator"]
    accepted = first.accepted or None
    total_prompt = sum(r.prompt_bytes for r in first.requests)
    shapes = {(len(r.requests), r.accepted) for r in runs}
    return {
        "ok": all(r.ok for r in runs),
        "sandbox": first.sandbox,
        "problems": [r.problem for r in runs if r.problem],
        "runs_agree": len(shapes) == 1,
        "accepted": first.accepted,
        "calls_worker": len(worker),
        "calls_evaluator": len(evaluator),
        "calls_total": len(first.requests),
        "calls_per_accepted": len(first.requests) / accepted if accepted else None,
        "prompt_worker_mean": _mean([r.prompt_bytes for r in worker]),
        "prompt_evaluator_mean": _mean([r.prompt_bytes for r in evaluator]),
        "prompt_max": max((r.prompt_bytes for r in first.requests), default=None),
        "prompt_worker_max": max((r.prompt_bytes for r in worker), default=None),
        "prompt_evaluator_max": max((r.prompt_bytes for r in evaluator), default=None),
        "prompt_total": total_prompt,
        "prompt_per_accepted": total_prompt / accepted if accepted else None,
        # Of each request's prompt bytes, the share the previous request of its role began
        # with too (a role's first request counts as all new): what prompt caches can serve.
        "prefix_share": _prefix_share(first.requests),
        "prefix_share_worker": _prefix_share(worker),
        "prefix_share_evaluator": _prefix_share(evaluator),
        "uncached_per_accepted": (
            sum(r.prompt_bytes - r.prefix_bytes for r in first.requests) / accepted
            if accepted
            else None
        ),
        "request_total": sum(r.body_bytes for r in first.requests),
        "wall_raw": statistics.median(r.wall for r in runs),
        "wall_net": statistics.median(r.net for r in runs),
        "wall_net_runs": [round(r.net, 3) for r in runs],
        "server_seconds_runs": [round(r.server, 3) for r in runs],
        "actions": [f"{r.role}:{r.task_id}:{r.action}" for r in first.requests],
    }


ROWS: tuple[tuple[str, str, str], ...] = (
    # (label, key, format)
    ("sandbox of the agents' commands", "sandbox", "s"),
    ("accepted tasks", "accepted", "d"),
    ("model calls: worker", "calls_worker", "d"),
    ("model calls: evaluator", "calls_evaluator", "d"),
    ("model calls: total", "calls_total", "d"),
    ("model calls per accepted task", "calls_per_accepted", ".2f"),
    ("prompt bytes per call: worker (mean)", "prompt_worker_mean", ",.0f"),
    ("prompt bytes per call: evaluator (mean)", "prompt_evaluator_mean", ",.0f"),
    ("prompt bytes per call: largest", "prompt_max", ",d"),
    ("prompt bytes: total", "prompt_total", ",d"),
    ("prompt bytes per accepted task", "prompt_per_accepted", ",.0f"),
    ("request bytes (tools included): total", "request_total", ",d"),
    ("prompt share a cache could serve (prefix of the role's last request)", "prefix_share", ".0%"),
    ("  worker", "prefix_share_worker", ".0%"),
    ("  evaluator", "prefix_share_evaluator", ".0%"),
    ("prompt bytes per accepted task not in that prefix", "uncached_per_accepted", ",.0f"),
    ("harness wall time, raw (s)", "wall_raw", ".3f"),
    ("harness wall time, net of server (s)", "wall_net", ".3f"),
)


def _cell(value: Any, spec: str) -> str:
    if value is None:
        return "-"
    if spec == "s":
        return str(value)
    if spec == "d" or spec == ",d":
        return format(int(value), spec)
    return format(float(value), spec)


def _ratio(a: Any, b: Any) -> str:
    if a is None or b is None or not b:
        return "-"
    return f"{float(a) / float(b):.2f}"


def table(ours: dict[str, Any] | None, theirs: dict[str, Any] | None) -> str:
    width = max(len(label) for label, _, _ in ROWS)
    lines = [f"{'':{width}}  {'taskhand':>10}  {'tilth':>10}  {'ratio':>6}"]
    for label, key, spec in ROWS:
        a = ours.get(key) if ours else None
        b = theirs.get(key) if theirs else None
        ratio = _ratio(a, b) if spec != "s" else ""
        lines.append(f"{label:{width}}  {_cell(a, spec):>10}  {_cell(b, spec):>10}  {ratio:>6}")
    return "\n".join(lines)


def verdict(ours: dict[str, Any], theirs: dict[str, Any]) -> tuple[bool, str]:
    fewer_bytes = (ours["prompt_per_accepted"] or 0) < (theirs["prompt_per_accepted"] or 0)
    calls_ok = ours["calls_per_accepted"] is not None and (
        theirs["calls_per_accepted"] is not None
        and ours["calls_per_accepted"] <= theirs["calls_per_accepted"]
    )
    same_shape = ours["calls_evaluator"] == theirs["calls_evaluator"]
    holds = fewer_bytes and calls_ok and same_shape
    bits = [
        f"prompt bytes per accepted task {'below' if fewer_bytes else 'not below'} Tilth's",
        f"model calls per accepted task {'no more than' if calls_ok else 'more than'} Tilth's",
    ]
    if not same_shape:
        bits.append(
            f"not like for like: taskhand made {ours['calls_evaluator']} evaluator calls, "
            f"Tilth {theirs['calls_evaluator']}"
        )
    return holds, "; ".join(bits)


# -- what each prompt shows --------------------------------------------------------------

SHOWN_WORKER = ("overview", "other tasks", "AGENTS.md", "description", "criteria", "rejection")
SHOWN_EVALUATOR = ("overview", "AGENTS.md", "description", "criteria", "case", "diff")


def _markers(spec: TaskSpec) -> dict[str, str]:
    other = next(t for t in TASKS if t.task_id != spec.task_id)
    code = spec.script.content.splitlines()
    return {
        "overview": "reporting scripts keep re-implementing",
        "other tasks": other.title,
        "AGENTS.md": "No third-party dependencies, ever.",
        "description": spec.description[:60],
        "criteria": spec.criteria[-1],
        "rejection": spec.script.next_step[:60],
        "case": spec.script.summary[:40],
        "diff": next(line for line in code if line.startswith("def ")),
    }


def _text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content") or "") for m in messages)


def shown(harnesses: list[str], keep: Path) -> dict[str, dict[str, str]]:
    """Per harness and role: which pieces of information the prompts carried.

    Worker: the first user message of each unit (a unit's start); the rejection: the whole
    conversation of the worker's first call after it. Evaluator: every call's messages.
    """
    out: dict[str, dict[str, str]] = {}
    for harness in harnesses:
        worker: dict[str, list[bool]] = {k: [] for k in SHOWN_WORKER}
        evaluator: dict[str, list[bool]] = {k: [] for k in SHOWN_EVALUATOR}
        rejected: set[str] = set()  # tasks whose reject the worker has not yet answered
        evaluated: set[str] = set()
        for path in sorted(keep.glob(f"*-{harness}-*.json")):
            body = json.loads(path.read_text())
            messages = body.get("messages") or []
            user = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
            spec = next((t for t in TASKS if t.task_id == find_task_id(user)), None)
            if spec is None:
                continue
            names = {(t.get("function") or {}).get("name") for t in body.get("tools") or []}
            marks = _markers(spec)
            if "submit_verdict" in names or not {"write", "write_file"} & names:
                for k in SHOWN_EVALUATOR:
                    evaluator[k].append(marks[k] in _text(messages))
                if spec.task_id in REJECTED and spec.task_id not in evaluated:
                    rejected.add(spec.task_id)  # its first verdict is the reject
                evaluated.add(spec.task_id)
                continue
            if not any(m.get("role") == "assistant" for m in messages):  # a unit's start
                for k in SHOWN_WORKER[:-1]:
                    worker[k].append(marks[k] in user)
            if spec.task_id in rejected:
                worker["rejection"].append(marks["rejection"] in _text(messages))
                rejected.discard(spec.task_id)
        out[harness] = {
            **{f"worker: {k}": _share(v) for k, v in worker.items()},
            **{f"evaluator: {k}": _share(v) for k, v in evaluator.items()},
        }
    return out


def _share(flags: list[bool]) -> str:
    if not flags:
        return "-"
    return "yes" if all(flags) else ("no" if not any(flags) else f"{sum(flags)}/{len(flags)}")


# -- main --------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs per harness (default 3)")
    parser.add_argument("--delay", type=float, default=0.05, help="server seconds per call")
    parser.add_argument("--only", choices=("taskhand", "tilth"), help="run one harness")
    parser.add_argument("--tilth", type=Path, default=ROOT / ".venv-tilth" / "bin" / "tilth")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per harness run")
    parser.add_argument("--keep", type=Path, help="write every request body to this folder")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--profile",
        type=Path,
        help="after the timed runs, run taskhand once more under pyinstrument; its report here",
    )
    args = parser.parse_args()

    harnesses: list[Harness] = []
    tilth_note = ""
    if args.only != "tilth":
        harnesses.append(taskhand())
    if args.only != "taskhand":
        if args.tilth.exists():
            harnesses.append(tilth(args.tilth))
        else:
            tilth_note = (
                f"Tilth could not be run: {args.tilth} is missing (Tilth 0.2.0 needs Python "
                "3.12+; `./dev bench review` installs it into .venv-tilth). Compared against "
                "its documented caps instead."
            )

    if not harnesses:
        print(f"nothing to run: {args.tilth} is missing", file=sys.stderr)
        return 2
    if (
        args.keep
        and (args.keep / "first-run").exists()
        and any((args.keep / "first-run").iterdir())
    ):
        print(f"{args.keep / 'first-run'} is not empty; choose another --keep", file=sys.stderr)
        return 2

    for harness in harnesses:
        compile_bytecode(harness)
    results: dict[str, list[Run]] = {}
    with tempfile.TemporaryDirectory(prefix="taskhand-review-bench-") as tmp:
        root = Path(tmp)
        template = root / "template"
        template.mkdir()
        make_project(template)
        keep = args.keep or root / "requests"
        scripts = {t.task_id: t.script for t in TASKS}
        server = ScriptedServer(scripts, REJECTED, delay=args.delay, keep=None)
        try:
            for number in range(args.runs):
                for harness in harnesses:
                    work = root / f"{harness.name}-{number + 1}"
                    work.mkdir()
                    server.keep = keep / "first-run" if number == 0 else None
                    run = run_once(harness, server, template, work, args.timeout)
                    results.setdefault(harness.name, []).append(run)
                    if not run.ok and not args.json:
                        print(f"{harness.name} run {number + 1}: {run.problem}", file=sys.stderr)
                        print(f"  output in {work} (kept until the bench ends)", file=sys.stderr)
                        tail = (work / "stdout.txt").read_text()[-2000:]
                        print(tail, file=sys.stderr)
            if args.profile:
                work = root / "taskhand-profiled"
                work.mkdir()
                server.keep = None
                run_once(profiled(taskhand(), args.profile), server, template, work, args.timeout)
        finally:
            server.close()
        info = shown(list(results), keep / "first-run")

    figs = {name: figures(runs) for name, runs in results.items()}
    ours, theirs = figs.get("taskhand"), figs.get("tilth")
    holds: bool | None = None
    why = ""
    if ours and theirs:
        holds, why = verdict(ours, theirs)

    if args.json:
        report = {
            "delay": args.delay,
            "runs": args.runs,
            "tasks": len(TASKS),
            "rejected_once": sorted(REJECTED),
            "figures": figs,
            "shown": info,
            "tilth_note": tilth_note,
            "tilth_caps_chars": TILTH_CAPS,
            "goal_holds": holds,
            "goal_detail": why,
            "requests": {
                name: [asdict(r) for r in runs[0].requests] for name, runs in results.items()
            },
        }
        print(json.dumps(report, indent=2))
        return 0 if all(f["ok"] for f in figs.values()) else 1

    print(
        f"review bench: {len(TASKS)} tasks, {', '.join(sorted(REJECTED))} rejected once; "
        f"{args.runs} run(s) each; server delay {args.delay:g} s per call (taken out of "
        "'net')"
    )
    print("prompt bytes = bytes of the request's messages as JSON (tool schemas not counted)")
    print("each harness's bytecode was compiled before the runs, as installing it does\n")
    print(table(ours, theirs))
    for name, f in figs.items():
        nets = ", ".join(f"{v:.3f}" for v in f["wall_net_runs"])
        print(f"{name}: net wall time per run (s): {nets}")
    for name, f in figs.items():
        if not f["ok"]:
            print(f"\n{name}: NOT ALL TASKS ACCEPTED: {'; '.join(f['problems'])}")
        if not f["runs_agree"]:
            print(f"\n{name}: runs differ in calls or accepted tasks; figures are run 1's")
    if info:
        print("\nwhat the prompts show (first worker prompt of each unit; each evaluator call)")
        keys = [
            *(f"worker: {k}" for k in SHOWN_WORKER),
            *(f"evaluator: {k}" for k in SHOWN_EVALUATOR),
        ]
        width = max(len(k) for k in keys)
        print(f"{'':{width}}  {'taskhand':>10}  {'tilth':>10}")
        for k in keys:
            a = info.get("taskhand", {}).get(k, "-")
            b = info.get("tilth", {}).get(k, "-")
            print(f"{k:{width}}  {a:>10}  {b:>10}")
    if tilth_note:
        print(f"\n{tilth_note}")
        caps = ", ".join(f"{k} {v:,} chars" for k, v in TILTH_CAPS.items())
        print(f"Tilth's documented caps on what it injects: {caps}.")
        if ours:
            print(
                "taskhand's prompts here: worker up to "
                f"{_cell(ours['prompt_worker_max'], ',d')} bytes, evaluator up to "
                f"{_cell(ours['prompt_evaluator_max'], ',d')} bytes; this feature's inputs are "
                "under every cap, so the caps bound neither harness here."
            )
    if holds is not None:
        print(f"\ngoal {'HOLDS' if holds else 'does NOT hold'}: {why}")
    return 0 if all(f["ok"] for f in figs.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
