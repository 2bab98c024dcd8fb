"""What one agent run is given and what it returns, as plain data: the contract every backend,
executor and store row shares.

A unit is one agent run in a fresh context for one stage of one task. Backends never move
task status; they report what happened and what it cost, and the harness decides. This module
imports nothing of taskhand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path


class Role(StrEnum):
    """Who runs a unit. The default pipeline has an implementer and evaluators (reviewers);
    the full lifecycle adds one role per stage."""

    IMPLEMENTER = "implementer"
    EVALUATOR = "evaluator"
    WRITER = "writer"  # the spec, and the interview's product questions
    EXPLORER = "explorer"  # maps the code the plan will touch
    PLANNER = "planner"  # the plan: steps, scope, criteria
    DESIGNER = "designer"  # a prototype of a ui task
    TESTER = "tester"  # the tests, before the implementer writes the code
    QA = "qa"  # runs the closing checks and walks the [found] criteria
    JUDGE = "judge"  # re-runs every closing check and tries to reject
    AUTHOR = "author"  # a whole plan from requirement documents (taskhand author)

    @property
    def judges(self) -> bool:
        """Whether its outcome is a verdict on a candidate (accept or reject)."""
        return self in (Role.EVALUATOR, Role.QA, Role.JUDGE)

    @property
    def writes(self) -> bool:
        """Whether it may change its workspace: the others only read and report."""
        return self in (Role.IMPLEMENTER, Role.TESTER, Role.DESIGNER)


class Case(StrEnum):
    """How a unit ended, as the agent reported it."""

    DONE = "done"  # the work is done; `resolution` says how
    QUESTION = "question"  # a person must answer `question` first
    FAILED = "failed"  # the agent gave up; `failure` says why
    ERROR = "error"  # the unit itself broke (crash, timeout, nonsense); `failure` says how


@dataclass
class Usage:
    """What a unit consumed, as its agent reported it. Cost is in dollars; `estimated` when
    derived from a price table.

    `tokens_in` counts every prompt token, cache reads (`tokens_cached`) and cache writes
    (`tokens_cache_write`) among them; `tokens_out` counts every generated token, thinking
    (`tokens_thinking`) among them. The parts are shown apart, never added to the totals again.
    """

    tokens_in: int = 0
    tokens_out: int = 0
    tokens_cached: int = 0
    cost: float = 0.0
    estimated: bool = False
    tokens_cache_write: int = 0
    tokens_thinking: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.tokens_in + other.tokens_in,
            self.tokens_out + other.tokens_out,
            self.tokens_cached + other.tokens_cached,
            self.cost + other.cost,
            self.estimated or other.estimated,
            self.tokens_cache_write + other.tokens_cache_write,
            self.tokens_thinking + other.tokens_thinking,
        )


OPTIONS = (2, 4)  # how many lettered options a question may have, least and most


@dataclass
class Question:
    text: str
    options: list[str] = field(default_factory=list)  # recommended first

    @property
    def problem(self) -> str:
        """Why a person could not answer it by letter, for the agent to fix; '' if they can."""
        least, most = OPTIONS
        given = [o for o in self.options if isinstance(o, str) and o.strip()]
        if not self.text.strip():
            return "a question needs its text"
        if least <= len(self.options) <= most and len(given) == len(self.options):
            return ""
        return (
            f"a question needs {least} to {most} lettered options (non-empty), the recommended "
            f"one first; it gave {len(given)}"
        )


@dataclass
class Evidence:
    """One acceptance criterion and the file:symbol the agent says meets it."""

    criterion: str
    evidence: str


@dataclass
class CaseReport:
    """The worker's case for its work: how each criterion is met, and what it is unsure of."""

    criteria: list[Evidence] = field(default_factory=list)
    workarounds: list[str] = field(default_factory=list)
    uncertainties: list[str] = field(default_factory=list)

    @classmethod
    def from_json(cls, data: dict[str, object]) -> CaseReport:
        """Leniently from a submitted case: what is not well formed is left out."""
        items = data.get("criteria")
        criteria = [
            Evidence(str(i.get("criterion", "")), str(i.get("evidence", "")))
            for i in (items if isinstance(items, list) else [])
            if isinstance(i, dict)
        ]

        def texts(key: str) -> list[str]:
            value = data.get(key)
            return [str(v) for v in value] if isinstance(value, list) else []

        return cls(criteria, texts("workarounds"), texts("uncertainties"))


# Why a reviewer rejects a candidate: the categories the evaluator prompt explains.
CATEGORIES = (
    "acceptance_gap",  # a criterion is not met by the diff
    "half_finished",  # debug output, TODOs, dead code, partial work left in
    "spec_violation",  # breaks an explicit constraint of the task or the project
    "scope_creep",  # work of another task, or unrelated changes
    "tests_pass_but_wrong",  # the worker's tests pass but the behaviour is wrong
    "weak_test",  # the worker's tests do not exercise what the criteria describe
)
VERDICTS = ("accept", "reject")
# A reviewer's focus in a review campaign; "general" alone is the default single reviewer.
LENSES = ("general", "correctness", "tests", "security", "maintainability", "documentation")


@dataclass
class Verdict:
    """A reviewer's judgement of one candidate: accept, or reject with a category and a fix."""

    accepted: bool
    category: str = ""  # one of CATEGORIES when rejected, "" when accepted
    concern: str = ""
    evidence: list[str] = field(default_factory=list)  # file:symbol pointers
    next_step: str = ""

    @classmethod
    def parse(cls, data: object) -> Verdict | str:
        """The verdict `data` states, or what is wrong with it in words a model can act on.

        Lenient where intent is clear (Tilth's `rejection_category`, one evidence string,
        empty strings for absent fields); strict where it is not.
        """
        if not isinstance(data, dict):
            return "the verdict must be a JSON object"
        verdict = str(data.get("verdict", "")).strip().lower()
        if verdict not in VERDICTS:
            return f"verdict must be accept or reject (got {data.get('verdict')!r})"
        category = data.get("category", data.get("rejection_category")) or ""
        concern, next_step = data.get("concern") or "", data.get("next_step") or ""
        evidence = data.get("evidence") or []
        if isinstance(evidence, str):
            evidence = [evidence]
        if not all(isinstance(v, str) for v in (category, concern, next_step)):
            return "category, concern and next_step must be strings"
        if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
            return "evidence must be a list of file:symbol strings"
        category = category.strip().lower()
        if verdict == "accept":
            if category:
                return f"an accept takes no category (got {category!r})"
            return cls(True, "", concern.strip(), [e for e in evidence if e.strip()])
        if category not in CATEGORIES:
            return f"a reject needs a category, one of {', '.join(CATEGORIES)} (got {category!r})"
        if not concern.strip():
            return "a reject needs a concern: what is wrong, in one to three sentences"
        if not next_step.strip():
            return "a reject needs a next_step: the concrete change the worker should make"
        kept = [e for e in evidence if e.strip()]
        return cls(False, category, concern.strip(), kept, next_step.strip())

    def as_json(self) -> dict[str, object]:
        return {
            "verdict": "accept" if self.accepted else "reject",
            "category": self.category,
            "concern": self.concern,
            "evidence": list(self.evidence),
            "next_step": self.next_step,
        }


@dataclass
class Outcome:
    case: Case
    resolution: str = ""
    failure: str = ""
    question: Question | None = None
    report: CaseReport = field(default_factory=CaseReport)
    verdict: Verdict | None = None  # an evaluator's judgement (case DONE)
    usage: Usage = field(default_factory=Usage)
    transcript: list[dict[str, object]] = field(default_factory=list)

    def asked_rightly(self) -> Outcome:
        """The outcome, or, when it asks a question a person cannot answer by letter (one
        option, none, five), the agent's error saying so: the unit is tried again, never a
        question cut to fit or one `answer` refuses. (The default pipeline's worker may ask
        in words, answered by `respond`: its question is not checked here.)"""
        if self.case is not Case.QUESTION:
            return self
        problem = self.question.problem if self.question else "a question needs its text"
        if not problem:
            return self
        failure = f"the agent's question was not accepted: {problem}"
        return replace(self, case=Case.ERROR, failure=failure, question=None)


@dataclass
class Unit:
    """Everything a backend needs to run one stage of one task, and nothing of the harness."""

    role: Role
    task_id: str
    attempt: int  # the try at this task, from 1; attempts a killed run cut short do not count
    prompt: str
    worktree: Path
    timeout_seconds: float
    model: str | None = None
    lens: str = ""  # an evaluator's review focus (general, security, ...)
    sandbox: Sandbox = field(default_factory=lambda: Sandbox())  # confines its processes
    browser: Browser | None = None  # a designer's or qa's headless browser, when it has one
    round: int = 1  # the role's unit on this task in this run, from 1 (a killed one is redone)
    # Variables of the attempt's workspace ($TASKHAND_PORT) for every process of the unit.
    env: dict[str, str] = field(default_factory=dict)
    # Told each transcript message as it happens, so the run can show a working unit's
    # transcript; a plain callback: the backend knows nothing of what it does with them.
    on_message: Callable[[dict[str, object]], None] | None = field(
        default=None, repr=False, compare=False
    )

    def record(self, transcript: list[dict[str, object]], *messages: dict[str, object]) -> None:
        """Add `messages` to `transcript` in order, telling `on_message` of each as it is
        added: the one way every backend grows a unit's transcript."""
        for message in messages:
            transcript.append(message)
            if self.on_message is not None:
                self.on_message(message)


@dataclass(frozen=True)
class Browser:
    """The headless browser a designer or qa unit drives: the app's address ("" when the
    project has no app) and the folder its screenshots are saved into."""

    url: str
    shots: Path


GIB = 1 << 30


@dataclass(frozen=True)
class Limits:
    """What one confined program (an agent unit, a check, an agent's shell command) may use:
    processes (threads count, as the kernel counts them), memory and disk, in bytes; 0 is no
    limit. Plans set them in `[limits]`; host.limits enforces them."""

    processes: int = 512
    memory: int = 4 * GIB
    disk: int = 8 * GIB  # written into its writable folders while it runs
    tmp: int = 1 * GIB  # each private memory-backed folder (/tmp, /dev/shm, the home)


@dataclass(frozen=True)
class Sandbox:
    """How a unit's processes are confined: `kind` is bwrap or none (host.sandbox turns it
    into the command line), with the limits every confined program runs under either way."""

    kind: str = "none"
    # What agent processes must read besides the system's folders and programs: the user's
    # objects (the workspace borrows them), an agent program's own files.
    readable: tuple[Path, ...] = field(default=())
    # What must never be shown, even when a readable path would hold it: the user's checkout
    # and the plan (a program folder inside the checkout is shown alone).
    hidden: tuple[Path, ...] = field(default=())
    limits: Limits = field(default_factory=Limits)

    @property
    def active(self) -> bool:
        return self.kind == "bwrap"

    def with_readable(self, paths: Sequence[Path]) -> Sandbox:
        return replace(self, readable=(*self.readable, *paths))

    def with_hidden(self, paths: Sequence[Path]) -> Sandbox:
        return replace(self, hidden=(*self.hidden, *paths))

    def with_limits(self, limits: Limits) -> Sandbox:
        return replace(self, limits=limits)
