"""Prompts for the full lifecycle's roles: writer, explorer, planner, designer, tester, qa and
judge. Each sees what its stage needs (the task, the spec and plan written so far, the
interview, a person's words) and, as every prompt, none of the harness's machinery.
"""

from __future__ import annotations

from taskhand.plan.model import Task
from taskhand.prompts import (
    Brief,
    Candidate,
    Context,
    _case,
    _fenced,
    _files,
    _gates,
    _shared,
    _template,
    plan_context,
)
from taskhand.text import cap


def _base(task: Task, context: Context) -> dict[str, str]:
    caps, plan = context.caps, context.plan
    # The interview comes from the brief: a dialect's Request and Response fields also hold
    # the harness's own requests (approve, review), which are machinery.
    return {
        **_shared(task, context),
        "exchanges": "",
        "plan": plan_context(plan, task.id, context.statuses, caps.plan_bytes),
    }


def writer(task: Task, context: Context, brief: Brief) -> str:
    """The spec unit: turn a person's draft into a spec, or ask what cannot be guessed."""
    return _template("writer").substitute(
        **_base(task, context), brief=brief.sections("spec", "interview", "remarks")
    )


def explorer(task: Task, context: Context, brief: Brief) -> str:
    """The code map the planner builds on: where the task's change will land."""
    return _template("explorer").substitute(**_base(task, context), brief=brief.sections("spec"))


def planner(task: Task, context: Context, brief: Brief) -> str:
    """The plan round: steps, scope, closing checks; the newest review must be answered."""
    return _template("planner").substitute(
        **_base(task, context), brief=brief.sections("spec", "map", "plan", "interview", "remarks")
    )


def designer(task: Task, context: Context, brief: Brief) -> str:
    """A prototype round of a ui task: a picture a person can accept or comment on."""
    return _template("designer").substitute(
        **_base(task, context), brief=brief.sections("spec", "plan", "remarks", "browser")
    )


def tester(task: Task, context: Context, brief: Brief) -> str:
    """The tests first, from the criteria, before any code exists."""
    return _template("tester").substitute(
        **_base(task, context), brief=brief.sections("spec", "plan", "remarks")
    )


def checker(role: str, task: Task, context: Context, brief: Brief, candidate: Candidate) -> str:
    """qa's or the judge's prompt: the candidate against every closing check and criterion."""
    caps = context.caps
    return _template(role).substitute(
        **_base(task, context),
        brief=brief.sections("spec", "plan", "browser"),
        case=_case(candidate),
        gates=_gates(candidate.gates),
        files=_files(candidate.changes),
        diff=_fenced(cap(candidate.patch, caps.diff_bytes), "diff"),
    )
