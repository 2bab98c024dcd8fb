"""The vocabulary is typed: no status or event kind is written as a bare string literal in
src/taskhand outside the enum that defines it.

The walk reads every module's syntax tree and lists each string literal (and each word quoted
in one, as SQL quotes it) that is a word of the vocabulary, outside docstrings and enum bodies.
"""

from __future__ import annotations

import ast
import re
from enum import StrEnum

from taskhand.plan.model import Status
from taskhand.state.events import EventKind
from taskhand.state.ledger import LedgerOutcome
from taskhand.state.records import AttemptStatus, Disposition, RunStatus, WorkerOutcome
from tests import ROOT

PACKAGE = ROOT / "src" / "taskhand"
VOCABULARY: list[type[StrEnum]] = [
    *(EventKind, RunStatus, AttemptStatus, LedgerOutcome, Status),
    *(Disposition, WorkerOutcome),
]
WORDS = {member.value for enum in VOCABULARY for member in enum}

# The agents speak their backends' protocols, whose words (a unit's case "failed", a
# question's "question" field, a verdict's "verdict" field) are not this vocabulary; nor are
# the stand-in gh's (a pull request's state "OPEN").
OTHER_VOCABULARY = ("agents/", "demo/gh.py")
# Words that are the same text with another meaning, each with where and why.
HOMONYMS = {
    ("config/model.py", "gated"): "an autonomy: a person approves plans and prototypes",
    ("config/values.py", "gated"): "an autonomy: a person approves plans and prototypes",
    ("pipeline/queue.py", "gate"): "a merge queue's step: run a candidate's checks",
    ("pipeline/queue.py", "conflicted"): "a merge queue's step: requeue a conflicting candidate",
    ("unit.py", "verdict"): "a verdict's field, accept or reject",
    ("state/ledger.py", "verdict"): "a verdict's field, accept or reject",
    ("views/progress.py", "passed"): "how a check that passed is marked",
    ("prompts/__init__.py", "passed"): "how a check that passed is marked",
    ("pipeline/lifecycle.py", "gate"): "the gate stage's name",
    ("pipeline/standing.py", "waiting"): "show --json's field: a person's move is due",
    ("run/movement.py", "waiting"): "a move's JSON field: a person's move is due",
    ("prompts/__init__.py", "verdict"): "the brief's section of the newest verdict",
    ("run/lifecycle.py", "accepted"): "a person's word in a hand-written Response",
    ("board/serve.py", "warning"): "uvicorn's log level",
    ("board/app.py", "question"): "an answer's JSON field: which question",
    ("views/board.py", "waiting"): "show --json's field: a person's move is due",
    ("cli/convert.py", "warning"): "the noun of a count of problems (1 warning)",
    ("cli/lint.py", "warning"): "the noun of a count of problems (1 warning)",
    ("cli/plan.py", "warning"): "the noun of a count of problems (1 warning)",
}


def bare_words(source: str) -> list[tuple[int, str]]:
    """(line, word) of each vocabulary word written as a literal in `source`."""
    tree = ast.parse(source)
    skipped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            skipped.add(id(body[0].value))  # a docstring
        if isinstance(node, ast.ClassDef) and any(
            isinstance(base, ast.Name) and base.id == "StrEnum" for base in node.bases
        ):
            skipped.update(id(inner) for inner in ast.walk(node))  # an enum's own members
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in skipped:
                continue
            quoted = re.findall(r"'(\w+)'", node.value)  # a word in SQL
            found += [(node.lineno, w) for w in {node.value, *quoted} if w in WORDS]
    return sorted(found)


def offenders() -> list[str]:
    listed = []
    for path in sorted(PACKAGE.rglob("*.py")):
        name = path.relative_to(PACKAGE).as_posix()
        if name.startswith(OTHER_VOCABULARY):
            continue
        for line, word in bare_words(path.read_text(encoding="utf-8")):
            if (name, word) not in HOMONYMS:
                listed.append(f"src/taskhand/{name}:{line}: {word!r}")
    return listed


def test_no_status_or_event_kind_is_a_bare_string_literal() -> None:
    assert offenders() == []


def test_the_walk_finds_a_bare_word_where_it_hides() -> None:
    source = '''
"""A docstring may say running."""
class Kind(StrEnum):
    RUNNING = "running"
def f(run, conn):
    conn.execute("UPDATE runs SET status = 'interrupted' WHERE id = ?")
    return run.status == "completed" or {"integrated": 1} or f"{run} failed"
'''
    assert bare_words(source) == [(6, "interrupted"), (7, "completed"), (7, "integrated")]


def test_the_allowances_are_still_needed() -> None:
    """An allowance that no longer excuses anything goes, so that the list only shrinks."""
    for name, word in HOMONYMS:
        assert word in {w for _, w in bare_words((PACKAGE / name).read_text())}, (name, word)
