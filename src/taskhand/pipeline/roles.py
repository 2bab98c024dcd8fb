"""What the full lifecycle's stages share: the brief each role reads (what the lifecycle wrote
so far), a read-only role's unit in a disposable copy, and how a unit's case settles its
stage (a question for a person, giving up, a broken unit).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from taskhand import prompts
from taskhand.host import app
from taskhand.host.allowlist import child_env
from taskhand.pipeline.harness import Harness
from taskhand.pipeline.work import Ended, Work
from taskhand.plan.model import Status
from taskhand.state import documents
from taskhand.state.documents import Documents
from taskhand.state.ledger import Entry, LedgerOutcome
from taskhand.state.life import Lifecycle
from taskhand.state.records import AttemptStatus
from taskhand.unit import Browser, Case, Outcome, Role
from taskhand.workspace.review_copy import disposable_copy

REMARKS_SHOWN = 5  # a person's newest remarks on the task, word for word


@contextmanager
def browsing(
    h: Harness, folder: Path, shots: Path | None, port: dict[str, str] | None = None
) -> Iterator[Browser | None]:
    """A browser for a unit working in `folder` when `shots` is given: the project's app
    started there by the runner (never by an agent), the screenshots saved into `shots`;
    `port` is the attempt's $TASKHAND_PORT, which the app sees beside its own $PORT."""
    if shots is None:
        yield None
        return
    shots.mkdir(parents=True, exist_ok=True)
    if not h.config.app.declared:
        yield Browser("", shots)
        return
    env = {**child_env(passed=h.config.env_pass), **(port or {})}
    with app.running(h.config.app, folder, env, sandbox=h.sandbox) as url:
        yield Browser(url, shots)


def brief(
    h: Harness, work: Work, verdict: str = "", browser: Browser | None = None
) -> prompts.Brief:
    """What the lifecycle wrote for the task so far, from where its dialect keeps it."""
    task, docs = work.task, Documents(work.plan, h.state)
    key = h.track.plan_key
    interview = []
    for q in h.store.questions(key, task.id):
        if q.open:
            continue
        index = ord(q.choice) - ord("a") if q.choice else -1
        chosen = documents.option_line(q, index) if 0 <= index < len(q.options) else ""
        answer = " ".join(x for x in (chosen, q.note or "") if x)
        interview.append(f"- Q{q.number}: {q.text} -> {answer}")
    remarks = [r.text for r in h.store.remarks(key, task.id)][-REMARKS_SHOWN:]
    code_map = docs.folder(task.id) / "map.md"
    return prompts.Brief(
        spec=docs.read(task, documents.SPEC),
        plan=docs.read(task, documents.PLAN),
        code_map=code_map.read_text(encoding="utf-8") if code_map.is_file() else "",
        interview=interview,
        remarks=remarks,
        verdict=verdict,
        browser=_browser_note(browser),
    )


def _browser_note(browser: Browser | None) -> str:
    if browser is None:
        return ""
    if browser.url:
        return (
            f"The app runs at {browser.url}. A headless browser is yours: open pages, click, "
            "type, read text and take screenshots with its tools."
        )
    return "The project has no app to open; work from the code and draw what you need."


def in_copy(
    h: Harness,
    work: Work,
    role: Role,
    prompt: Callable[[prompts.Brief], str],
    sha: str,
    shots: Path | None = None,
    keep: Callable[[Path], None] | None = None,
) -> Outcome | Ended:
    """The role's unit in a disposable copy at `sha` (the attempt's own workspace stays as it
    was), with a browser saving into `shots` when given (and the project's app running in the
    copy when it has one); `keep` takes what the harness keeps of the copy (a prototype)
    before it is wiped."""
    task, attempt = work.task, work.attempt
    copy_path, index = h.review_copy(str(role))
    try:
        with disposable_copy(h.depot, sha, copy_path, index, work.ws.path) as copy:
            port = h.workspace_env(attempt.worktree)
            with browsing(h, copy.path, shots, port) as browser:  # stops before the checks
                shown = prompt(brief(h, work, browser=browser))
                before = h.guard.before()
                outcome = h.unit(role, task, attempt, copy.path, h.redact(shown), browser=browser)
            broken = h.breaches(before, f"the {role}'s unit", task.id)
            if keep is not None and not broken:
                keep(copy.path)
    except app.AppError as exc:  # the project's app, not the agent: a person looks at it
        reason = f"the app did not start for the {role}: {exc}"
        entry = Entry(LedgerOutcome.UNIT_FAILED, reason)
        return Ended(Status.FAIL, h.end_attempt(attempt, AttemptStatus.FAILED, reason, entry))
    if broken:
        return h.violation(attempt, task, broken)
    if copy.violations:
        reason = f"the {role} changed the task's workspace: " + ", ".join(copy.violations[:10])
        entry = Entry(LedgerOutcome.UNIT_FAILED, reason)
        return h.retry(attempt, task, AttemptStatus.FAILED, reason, entry)
    return outcome


def done_in_copy(
    h: Harness, work: Work, role: Role, prompt: Callable[[prompts.Brief], str], stage: Lifecycle
) -> Outcome | Ended:
    """A read-only role's unit at the attempt's base, when it did its stage's work; else how
    the attempt ended (a question, giving up, a broken unit)."""
    outcome = in_copy(h, work, role, prompt, work.base)
    if isinstance(outcome, Ended):
        return outcome
    return settle(h, work, outcome, stage) or outcome


def settle(h: Harness, work: Work, outcome: Outcome, stage: Lifecycle) -> Ended | None:
    """End the attempt when the unit did not do its stage's work: a question waits for a
    person (the task returns to `stage` once answered), giving up parks the task, a broken
    unit tries again. None when the unit is done."""
    task, attempt = work.task, work.attempt
    outcome = outcome.asked_rightly()  # the interview's questions are answered by letter
    if outcome.case is Case.QUESTION and outcome.question:
        question = h.track.ask(work.plan, h.state, task, outcome.question, stage)
        h.store.finish_attempt(attempt.id, AttemptStatus.QUESTION, h.redact(question.text))
        return Ended(Status.WAIT, documents.request_text(question, task.id))
    if outcome.case is Case.FAILED:
        failure = outcome.failure or "the agent gave up"
        entry = Entry(LedgerOutcome.GAVE_UP, failure)
        return Ended(Status.FAIL, h.end_attempt(attempt, AttemptStatus.GAVE_UP, failure, entry))
    if outcome.case is not Case.DONE:
        failure = outcome.failure or "the agent did not finish"
        entry = Entry(LedgerOutcome.UNIT_FAILED, failure)
        return h.retry(attempt, task, AttemptStatus.FAILED, failure, entry)
    return None


def hand_over(h: Harness, work: Work, request: str) -> Ended:
    """The task reached a person's gate: the attempt ends there, the task waits."""
    h.store.finish_attempt(work.attempt.id, AttemptStatus.AWAITING, h.redact(request))
    return Ended(Status.WAIT, request)
