"""What a unit submits to finish: the two finishing tools as the model is offered them, and
the checks a submission passes before it is accepted (a failed one is answered with what to
fix, and the model calls the tool again).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from taskhand.plan import authored
from taskhand.plan.model import Dialect
from taskhand.unit import CATEGORIES, VERDICTS

CASES = ("done", "question", "failed")
SUBMIT_CASE: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "submit_case",
        "description": "Finish the unit and report how it ended. Call it once, last.",
        "parameters": {
            "type": "object",
            "properties": {
                "case": {"type": "string", "enum": list(CASES)},
                "resolution": {"type": "string", "description": "done: what you did, verified"},
                "criteria": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {
                            "criterion": {"type": "string"},
                            "evidence": {"type": "string", "description": "file:symbol"},
                        },
                        "required": ["criterion", "evidence"],
                    },
                },
                "workarounds": {"type": "array", "items": {"type": "string"}},
                "uncertainties": {"type": "array", "items": {"type": "string"}},
                "question": {"type": "string", "description": "question: what a person decides"},
                "options": {
                    "type": "array",
                    "items": {"type": "string"},
                    "minItems": 2,
                    "maxItems": 4,
                    "description": "question: 2-4 answers, the recommended one first",
                },
                "failure": {"type": "string", "description": "failed: why it cannot be done"},
            },
            "required": ["case"],
        },
    },
}
SUBMIT_VERDICT: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "submit_verdict",
        "description": "Finish the review and give your verdict. Call it once, last.",
        "parameters": {
            "type": "object",
            "properties": {
                "verdict": {"type": "string", "enum": list(VERDICTS)},
                "category": {
                    "type": ["string", "null"],
                    "enum": [*CATEGORIES, None],
                    "description": "reject: why, as one category; null for accept",
                },
                "concern": {"type": "string", "description": "what is wrong, or what you checked"},
                "evidence": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "file:symbol pointers to what the concern is about",
                },
                "next_step": {
                    "type": ["string", "null"],
                    "description": "reject: the concrete change the worker should make",
                },
            },
            "required": ["verdict", "concern"],
        },
    },
}


SUBMIT_PLAN: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "submit_plan",
        "description": "Finish with the plan (case done), or a question for a person. Call it "
        "once, last.",
        "parameters": {
            "type": "object",
            "properties": {
                "case": {"type": "string", "enum": list(CASES)},
                "plan": authored.SCHEMA,
                "question": SUBMIT_CASE["function"]["parameters"]["properties"]["question"],
                "options": SUBMIT_CASE["function"]["parameters"]["properties"]["options"],
                "failure": {"type": "string", "description": "failed: why no plan can be made"},
            },
            "required": ["case"],
        },
    },
}


def check_plan(arguments: dict[str, Any]) -> str:
    """Why a submit_plan cannot be accepted, as a message the model can act on; '' if valid.
    The harness checks the plan's files again (dependencies, cycles) after it is written."""
    if arguments.get("case") != "done":
        return check({**arguments, "resolution": "(a plan)"}).replace("submit_case", "submit_plan")
    frame = authored.Frame(Dialect.MARKDOWN, Path("plan"), (), "")
    found = authored.build(arguments.get("plan"), frame)
    code = arguments.get("plan", {}).get("code") if isinstance(arguments.get("plan"), dict) else 0
    if not isinstance(found, list) and isinstance(code, str | None):
        return ""
    problems = found if isinstance(found, list) else [f"code {code!r} must be 3-5 letters A-Z"]
    return "error: submit_plan was not accepted: " + "; ".join(problems[:20]) + "; call it again"


def parse(arguments: str, tool: str) -> dict[str, Any] | str:
    """A submission's arguments as an object, or the corrective message for the model."""
    try:
        value = json.loads(arguments or "{}")
    except json.JSONDecodeError as exc:
        return (
            f"error: the arguments of {tool} were not valid JSON ({exc}); call it again "
            "with one JSON object"
        )
    if not isinstance(value, dict):
        return f"error: the arguments of {tool} must be a JSON object; call it again"
    return value


def check(arguments: dict[str, Any]) -> str:
    """Why a submit_case cannot be accepted, as a message the model can act on; '' if valid."""
    case = arguments.get("case")
    problem = ""
    if case not in CASES:
        problem = f"case must be one of {', '.join(CASES)} (got {case!r})"
    elif case == "done" and not _is_text(arguments.get("resolution")):
        problem = "a done case needs a resolution: what you did and how you verified it"
    elif case == "question" and not _is_text(arguments.get("question")):
        problem = "a question case needs the question"
    elif case == "question" and not _is_texts(arguments.get("options"), 2, 4):
        problem = "a question needs 2 to 4 options (non-empty strings), the recommended one first"
    elif case == "failed" and not _is_text(arguments.get("failure")):
        problem = "a failed case needs the failure: why the task cannot be done"
    elif not all(_is_texts(arguments.get(k) or []) for k in ("workarounds", "uncertainties")):
        problem = "workarounds and uncertainties must be lists of strings"
    elif not _is_criteria(arguments.get("criteria") or []):
        problem = 'criteria must be a list of {"criterion": ..., "evidence": "file:symbol"}'
    return f"error: submit_case was not accepted: {problem}; call it again" if problem else ""


def _is_text(value: object) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _is_texts(value: object, least: int = 0, most: int | None = None) -> bool:
    return (
        isinstance(value, list)
        and least <= len(value) <= (len(value) if most is None else most)
        and all(_is_text(item) for item in value)
    )


def _is_criteria(value: object) -> bool:
    return isinstance(value, list) and all(
        isinstance(item, dict)
        and _is_text(item.get("criterion"))
        and isinstance(item.get("evidence"), str)
        for item in value
    )
