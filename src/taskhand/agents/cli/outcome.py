"""The block a cli agent ends its final message with: an implementer's fenced JSON that says
done, question or failed, or a reviewer's verdict, read leniently; what is wrong with it comes
back as a string.
"""

from __future__ import annotations

import contextlib
import json
import re
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from taskhand.host.secrets import Redactor
from taskhand.unit import Case, CaseReport, Outcome, Question, Role, Usage, Verdict


@dataclass
class Found:
    case: Case
    resolution: str = ""
    failure: str = ""
    question: Question | None = None
    report: CaseReport = field(default_factory=CaseReport)
    verdict: Verdict | None = None


TAIL_SEARCHED = 20_000  # characters from the end searched for a bare {...} outcome
REJECTED = "the agent's outcome block was not accepted: "  # what the unit's nudge corrects


def parse_outcome(text: str, role: Role = Role.IMPLEMENTER) -> Found | str:
    """The outcome the final message ends with: the last fenced JSON block that has the role's
    key ("case", or "verdict" for a reviewer), else the last {...} object that has it; a string
    saying what is wrong otherwise."""
    if role.judges:
        return _verdict(_last_block(text, "verdict"))
    block = _last_block(text, "case")
    if block is None:
        return "the agent's final message has no outcome block (a fenced JSON with a case)"
    return read_block(block, role)


def read_block(block: dict[str, Any], role: Role) -> Found | str:
    """The outcome one block states (a case, or a reviewer's verdict); what is wrong if not."""
    if role.judges:
        return _verdict(block)
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
        if not question:
            return "the agent's outcome block asks a question but gives no question text"
        asked = Question(question, listed)
        return REJECTED + asked.problem if asked.problem else Found(Case.QUESTION, question=asked)
    return f"the agent's outcome block has case {case!r} (expected done, question or failed)"


def _verdict(block: dict[str, Any] | None) -> Found | str:
    if block is None:
        return "the reviewer's final message has no verdict block (a fenced JSON with a verdict)"
    verdict = Verdict.parse(block)
    if isinstance(verdict, str):
        return f"the reviewer's verdict block is not usable: {verdict}"
    return Found(Case.DONE, verdict=verdict)


def outcome(
    case: Case,
    found: Found | None,
    failure: str,
    usage: Usage,
    transcript: list[dict[str, object]],
    redact: Redactor,
) -> Outcome:
    """The unit's outcome from what its final message said, secrets scrubbed from every text
    in it (the verdict's category and the case are from fixed sets)."""
    said = found or Found(case)
    asked = said.question
    verdict = said.verdict
    if verdict is not None:
        verdict = replace(
            verdict,
            concern=redact(verdict.concern),
            evidence=redact.value(verdict.evidence),
            next_step=redact(verdict.next_step),
        )
    return Outcome(
        case,
        resolution=redact(said.resolution),
        failure=redact(failure or said.failure),
        question=Question(redact(asked.text), redact.value(asked.options)) if asked else None,
        report=CaseReport.from_json(redact.value(asdict(said.report))),
        verdict=verdict,
        usage=usage,
        transcript=redact.value(transcript),
    )


def _last_block(text: str, key: str) -> dict[str, Any] | None:
    """The last fenced JSON object in `text` that has `key`, else the last bare one in its tail."""
    candidates = [b for b in map(_load, _fenced(text)) if b is not None and key in b]
    if not candidates:
        decoder, tail = json.JSONDecoder(), text[-TAIL_SEARCHED:]
        for start in (m.start() for m in re.finditer(r"\{", tail)):
            with contextlib.suppress(ValueError):
                value, _ = decoder.raw_decode(tail, start)
                if isinstance(value, dict) and key in value:
                    candidates.append(value)
    return candidates[-1] if candidates else None


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
