"""The author's prompt (`taskhand author`): the requirement documents, the project it may read,
how a plan is made, a person's answers so far, and what the checks found in its last plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from taskhand.plan.model import Dialect
from taskhand.prompts import _fenced, _section, _template
from taskhand.text import cap

ASK = (
    "If a decision only a person can make is left open by the documents and the project, ask "
    "ONE question instead of writing the plan: two to four options, the one you recommend "
    'first, each a short phrase with the reason: {"case": "question", "question": "...", '
    '"options": ["recommended: why", "other"]}. Otherwise write the plan.'
)
NO_ASKING = (
    "Nobody is there to answer questions: where the documents leave a choice open, make the "
    "sensible one and say so in the objective."
)


@dataclass(frozen=True)
class Requirement:
    """One requirement document as the author reads it: its name and its text."""

    name: str
    text: str


@dataclass(frozen=True)
class AuthorBrief:
    """Everything one round of the author sees."""

    requirements: list[Requirement]
    dialect: Dialect
    project: str  # what the workspace holds, in a sentence
    ask: bool = False
    code: str = ""  # the plan code a person chose, if any
    interview: list[str] = field(default_factory=list)  # "Q1: ... -> answer" lines
    feedback: list[str] = field(default_factory=list)  # what the checks found last round
    last_plan: str = ""  # the plan those findings are about, as the author sent it


def author(brief: AuthorBrief, document_bytes: int) -> str:
    """The prompt of one authoring round; each document cut to `document_bytes`."""
    documents = "".join(
        _section(f"{r.name}", _fenced(cap(r.text, document_bytes), "")) for r in brief.requirements
    )
    code = brief.code or "CODE"
    id_form = f"{code}-N" if brief.dialect is Dialect.TASKTRACK else "T-NNN (T-001, T-002, ...)"
    if brief.code:
        id_form += f"; use the code {brief.code}"
    feedback = ""
    if brief.feedback:
        found = "\n".join(f"- {line}" for line in brief.feedback)
        feedback = _section(
            "What the checks found in your last plan (fix every one, keep the rest)",
            found
            + (
                "\n\nYour last plan:\n\n" + _fenced(cap(brief.last_plan, document_bytes), "json")
                if brief.last_plan
                else ""
            ),
        )
    answers = "\n".join(f"- {line}" for line in brief.interview)
    interview = _section("A person's answers to your questions", answers)
    return _template("author").substitute(
        requirements=documents,
        project=brief.project,
        id_form=id_form,
        interview=interview,
        feedback=feedback,
        asking=ASK if brief.ask else NO_ASKING,
    )
