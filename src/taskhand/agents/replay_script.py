"""A replay script, read and checked. A script (TOML, or JSON of the same shape) lists,
per task, one entry per attempt (the last repeats): actions on the worktree, then the
outcome and its usage; and what the reviewer of that attempt does, per lens if need be:

    [[tasks."T-001"]]
    outcome = "done"                 # done | question | failed | error
    resolution = "Added count()."
    tokens_in = 1200                 # optional usage (all of USAGE); defaults from the prompt
    [[tasks."T-001".actions]]
    write = "wc.py"
    text = "def count(text): ..."
    [tasks."T-001".review]           # optional; without it the reviewer accepts
    verdict = "reject"               # accept | reject (category, concern, evidence, next_step)
    category = "acceptance_gap"
    concern = "Empty files are not handled."
    next_step = "Return 0 for empty input and test it."
    [[tasks."T-001".review.actions]] # performed in the reviewer's copy of the candidate
    run = ["python", "-m", "pytest", "-q"]
    [tasks."T-001".reviews.security] # overrides `review` for one lens
    verdict = "accept"

The full lifecycle's roles have lists of their own, one entry per unit of that role on the
task (its round; the last repeats): what a writer, explorer, planner, designer or tester does
and says, or a qa's or judge's verdict. A role without a list does its work and accepts:

    [[roles."T-001".writer]]
    outcome = "question"
    question = "Where should the toggle live?"
    options = ["Header (recommended: visible everywhere)", "Settings page"]
    [[roles."T-001".writer]]
    resolution = "The spec: ..."
    [[roles."T-001".qa]]
    verdict = "reject"               # category, concern, next_step as in a review

A unit with a browser (designer, qa) may also leave pictures in its shots folder:
`screenshot = "found-1"` (optional `url`, default the app's; `fill = "#search"` with
`value = "py"` types into a field first) saves a real 1440x900 PNG of the page;
`svg = "prototype"` with `text = "<svg ...>"` saves the drawing as it is.

`taskhand author`'s units read `[[author]]`, one entry per unit (the last repeats): a question
as above, or `plan = {code, title, objective, phases}`, the plan it returns (docs/authoring.md).
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

from taskhand.agents.base import AgentError
from taskhand.unit import LENSES, Case, Role, Verdict

ACTIONS = ("write", "edit", "delete", "run", "commit", "sleep", "screenshot", "svg")
PARTS = ("tokens_cached", "tokens_cache_write", "tokens_thinking")  # among tokens in and out
USAGE = ("tokens_in", "tokens_out", *PARTS, "cost")
Entries = list[dict[str, Any]]


class ScriptError(AgentError):
    """A replay script that cannot be used; the message names the file and the fix."""


def read_script(path: Path) -> tuple[dict[str, Entries], dict[str, dict[str, Entries]], Entries]:
    """The script's attempts per task, lists per task and role, and author entries, every one
    checked as the agent will read it: a ScriptError names the file, the place and the fix."""
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise ScriptError(
            f"replay script {path}: cannot be read ({exc}) (fix: give a "
            "readable TOML or JSON file with --script)"
        ) from None
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise ScriptError(f"replay script {path}: {exc} (fix: correct its syntax)") from None
    if not isinstance(data, dict):
        raise ScriptError(f"replay script {path}: not a table of tasks (fix: see docs/running.md)")
    tasks = data.get("tasks", {})
    if not isinstance(tasks, dict):
        raise ScriptError(
            f"replay script {path}: 'tasks' must be a table (fix: use [[tasks.\"T-001\"]] entries)"
        )
    for task_id, attempts in tasks.items():
        if not isinstance(attempts, list) or not all(isinstance(a, dict) for a in attempts):
            raise ScriptError(
                f"replay script {path}: tasks.{task_id} must be a list of "
                f'attempts (fix: write [[tasks."{task_id}"]])'
            )
        for attempt in attempts:
            _check_attempt(path, task_id, attempt)
    roles = _roles(path, data.get("roles", {}))
    author = data.get("author", [])
    if not isinstance(author, list) or not all(isinstance(e, dict) for e in author):
        raise ScriptError(f"replay script {path}: 'author' must be a list (fix: [[author]])")
    for entry in author:
        _check_attempt(path, "author", entry)
    return tasks, roles, author


def _roles(path: Path, table: object) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """The script's lists per task and role, checked as the attempts' and reviews' are."""
    where = f"replay script {path}: roles"
    if not isinstance(table, dict):
        raise ScriptError(f'{where} must be a table (fix: write [[roles."T-001".writer]])')
    known = [str(r) for r in Role if r not in (Role.EVALUATOR,)]
    for task_id, lists in table.items():
        if not isinstance(lists, dict):
            raise ScriptError(f"{where}.{task_id} must be a table of roles (fix: see --help)")
        for role, entries in lists.items():
            if role not in known:
                raise ScriptError(
                    f"{where}.{task_id}: no role {role!r} (fix: use {', '.join(known)})"
                )
            if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
                raise ScriptError(
                    f"{where}.{task_id}.{role} must be a list "
                    f'(fix: write [[roles."{task_id}".{role}]])'
                )
            for entry in entries:
                if Role(role).judges:
                    _check_review(f"{where}.{task_id}.{role}", entry)
                else:
                    _check_attempt(path, task_id, entry)
    return table


def _check_attempt(path: Path, task_id: str, attempt: dict[str, Any]) -> None:
    where = f"replay script {path}: tasks.{task_id}"
    outcome = attempt.get("outcome", "done")
    if outcome not in {c.value for c in Case}:
        raise ScriptError(
            f"{where}: outcome {outcome!r} (fix: use done, question, failed or error)"
        )
    _check_steps(where, attempt)
    if "review" in attempt:
        _check_review(f"{where}.review", attempt["review"])
    reviews = attempt.get("reviews", {})
    if not isinstance(reviews, dict):
        raise ScriptError(
            f'{where}.reviews must be a table of lenses (fix: write [tasks."{task_id}".reviews.'
            "security] and the like)"
        )
    for lens, review in reviews.items():
        if lens not in LENSES:
            raise ScriptError(
                f"{where}.reviews: no lens {lens!r} (fix: use one of {', '.join(LENSES)})"
            )
        _check_review(f"{where}.reviews.{lens}", review)


def _check_review(where: str, review: object) -> None:
    if not isinstance(review, dict):
        raise ScriptError(f'{where} must be a table (fix: give it verdict = "accept" or the like)')
    outcome = review.get("outcome", "done")
    if outcome not in ("done", "error"):
        raise ScriptError(
            f"{where}: outcome {outcome!r} (fix: leave it out and give a verdict, or say "
            'outcome = "error" with a failure)'
        )
    if outcome == "done":
        verdict = Verdict.parse(review)
        if isinstance(verdict, str):
            raise ScriptError(f"{where}: {verdict} (fix: correct the review's verdict fields)")
    _check_steps(where, review)


def _check_steps(where: str, entry: dict[str, Any]) -> None:
    """The entry's usage numbers and actions, as _usage and _perform will read them."""
    for key in USAGE:
        value = entry.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ScriptError(f"{where}: {key} must be a number (got {value!r}) (fix: e.g. 1200)")
    actions = entry.get("actions", [])
    if not isinstance(actions, list) or not all(isinstance(a, dict) for a in actions):
        raise ScriptError(f"{where}: actions must be a list of tables (fix: use [[...actions]])")
    for action in actions:
        kinds = [k for k in ACTIONS if k in action]
        if len(kinds) != 1:
            raise ScriptError(
                f"{where}: an action needs exactly one of {', '.join(ACTIONS)} "
                f"(got {sorted(action)}) (fix: give each action table one of them)"
            )
        if kinds == ["svg"] and not str(action.get("text", "")).lstrip().startswith("<svg"):
            raise ScriptError(
                f'{where}: svg = {action["svg"]!r} needs the drawing (fix: text = "<svg ...>")'
            )
