"""The outcome block a cli agent ends its final message with: the fenced JSON that says done,
question or failed, read leniently; what is wrong with it comes back as a string.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from taskhand.agents.base import Case, CaseReport, Question


@dataclass
class Found:
    case: Case
    resolution: str = ""
    failure: str = ""
    question: Question | None = None
    report: CaseReport = field(default_factory=CaseReport)


TAIL_SEARCHED = 20_000  # characters from the end searched for a bare {...} outcome


def parse_outcome(text: str) -> Found | str:
    """The outcome the final message ends with: the last fenced JSON block that has a "case",
    else the last {...} object that has one; a string saying what is wrong otherwise."""
    candidates = [b for b in map(_load, _fenced(text)) if b is not None and "case" in b]
    if not candidates:
        decoder, tail = json.JSONDecoder(), text[-TAIL_SEARCHED:]
        for start in (m.start() for m in re.finditer(r"\{", tail)):
            with contextlib.suppress(ValueError):
                value, _ = decoder.raw_decode(tail, start)
                if isinstance(value, dict) and "case" in value:
                    candidates.append(value)
    if not candidates:
        return "the agent's final message has no outcome block (a fenced JSON with a case)"
    block = candidates[-1]
    case = str(block.get("case", "")).strip().lower()
    if case == "done":
        report = CaseReport.from_json(block)
        return Found(Case.DONE, resolution=_text(block.get("resolution")), report=report)
    if case == "failed":
        return Found(Case.FAILED, failure=_text(block.get("failure")) or "the agent gave up")
    if case == "question":
        options = block.get("options")
        listed = [str(o) for o in options] if isinstance(options, list) else []
        question = _text(block.get("question"))
        if question:
            return Found(Case.QUESTION, question=Question(question, listed))
        return "the agent's outcome block asks a question but gives no question text"
    return f"the agent's outcome block has case {case!r} (expected done, question or failed)"


def _fenced(text: str) -> list[str]:
    """The bodies of the ``` fenced blocks in `text`, whatever their language."""
    blocks: list[str] = []
    body: list[str] | None = None
    for line in text.splitlines():
        if line.strip().startswith("```"):
            if body is None:
                body = []
            else:
                blocks.append("\n".join(body))
                body = None
        elif body is not None:
            body.append(line)
    return blocks


def _load(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _text(value: object) -> str:
    return "" if value is None else value if isinstance(value, str) else json.dumps(value)
