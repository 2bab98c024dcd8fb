"""The outcome tools as an agent program sees them, with our own loop's schemas, and the one
check a call passes, in the server (so the model can retry) and again in the harness (which
trusts nothing it reads): what the call says as an outcome block, or what is wrong with it.
"""

from __future__ import annotations

import json
from typing import Any

from taskhand.agents.openai.submissions import SUBMIT_CASE, SUBMIT_VERDICT, check
from taskhand.unit import Role, Verdict

SERVER = "taskhand"  # the server's name in each program's configuration
ARGUMENTS_LIMIT = 64_000  # characters of a call's arguments, as JSON; more is refused
_CASE = SUBMIT_CASE["function"]
_QUESTION = {key: _CASE["parameters"]["properties"][key] for key in ("question", "options")}
# `ask` is submit_case's question case as a tool of its own: the same properties, by reference.
ASK: dict[str, Any] = {
    "name": "ask",
    "description": "Stop and ask a person to decide: the question and 2-4 options, the one you "
    "recommend first. It finishes the unit; call it instead of submit_case.",
    "parameters": {
        "type": "object",
        "properties": _QUESTION,
        "required": ["question", "options"],
        "additionalProperties": False,
    },
}


def offered(role: Role) -> list[dict[str, Any]]:
    """The tools a unit of `role` may finish with: name, description and JSON schema."""
    if role.judges:
        return [SUBMIT_VERDICT["function"]]
    return [_CASE, ASK]


def finisher(role: Role) -> str:
    """The tool the prompt tells a unit of `role` to finish with."""
    return str(offered(role)[0]["name"])


def accept(name: str, arguments: object, role: Role) -> dict[str, Any] | str:
    """The outcome block (`{"case": ...}` or `{"verdict": ...}`) a call of tool `name` gives,
    checked as our loop checks its submissions; a message saying what to fix otherwise."""
    names = [str(tool["name"]) for tool in offered(role)]
    if name not in names:
        return f"error: {name} is not offered to the {role}; finish by calling {names[0]}"
    if not isinstance(arguments, dict):
        return f"error: the arguments of {name} must be a JSON object; call it again"
    if len(json.dumps(arguments)) > ARGUMENTS_LIMIT:
        return f"error: the arguments of {name} exceed {ARGUMENTS_LIMIT} characters; be brief"
    if name == "submit_verdict":
        verdict = Verdict.parse(arguments)
        if isinstance(verdict, str):
            return f"error: submit_verdict was not accepted: {verdict}; call it again"
        return dict(arguments)
    unknown = sorted(set(arguments) - set(_QUESTION)) if name == "ask" else []
    if unknown:
        return f"error: ask has no argument {unknown[0]!r}; it takes question and options"
    block = {"case": "question", **arguments} if name == "ask" else dict(arguments)
    problem = check(block)
    return problem.replace("submit_case", name) if problem else block
