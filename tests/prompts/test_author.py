"""The author's prompt: the documents fenced whole, the id form of the dialect, the answers
and the checks' findings only when there are some."""

from __future__ import annotations

from taskhand.plan.model import Dialect
from taskhand.prompts.author import NO_ASKING, AuthorBrief, Requirement, author


def test_a_document_with_fences_of_its_own_stays_one_block() -> None:
    text = "# Spec\n\n```python\nprint(1)\n```\n"
    prompt = author(AuthorBrief([Requirement("spec.md", text)], Dialect.MARKDOWN, "empty"), 10_000)
    assert "## spec.md\n\n````\n" + text.rstrip() + "\n````" in prompt
    assert "T-NNN (T-001, T-002, ...)" in prompt and NO_ASKING in prompt
    assert "What the checks found" not in prompt and "A person's answers" not in prompt


def test_the_code_the_answers_and_the_findings_are_shown() -> None:
    brief = AuthorBrief(
        [Requirement("r.md", "Do it.")],
        Dialect.TASKTRACK,
        "The workspace holds the project.",
        ask=True,
        code="WORD",
        interview=["Q1: Which? -> (a) this"],
        feedback=["WORD-2.md:7: error: a cycle"],
        last_plan='{"code": "WORD"}',
    )
    prompt = author(brief, 10_000)
    assert "task N is written WORD-N; use the code WORD" in prompt
    assert "ask ONE question" in prompt and "- Q1: Which? -> (a) this\n" in prompt
    assert "- WORD-2.md:7: error: a cycle" in prompt and '{"code": "WORD"}' in prompt
