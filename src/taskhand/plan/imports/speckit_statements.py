"""The dependency statements a Spec Kit file writes in prose, read one by one: `T020 depends
on T011-T019; T021 depends on T020`, `Tests (T004-T011) before implementation (T012-T023)`,
`T013, T014 can run in parallel after T012`, `T001 -> T002 -> T003`, `**Blocks**: T009`.

A line holds as many statements as its clauses (split at `;`, at sentence ends, and at each
parenthesis that says something of its own); each statement names who waits (its subject,
the ids before its verb) and for whom (its object, the ids after). A statement missing either
side, or of a form not read here, is never guessed at: it comes back as unread, to be reported.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

_ID = r"T\d+[a-z]?"
_ITEM = rf"{_ID}(?:\s*(?:-|\u2013|\u2014|\.\.|to|through)\s*{_ID})?"
_ID_LIST = re.compile(rf"\b{_ITEM}(?:(?:\s*(?:,|&|\+|/)\s*(?:and\s+)?|\s+and\s+|\s+){_ITEM})*\b")
_RANGE = re.compile(rf"({_ID})\s*(?:-|\u2013|\u2014|\.\.|to|through)\s*({_ID})")
_IDS = re.compile(rf"\b{_ID}\b")
# Who waits for whom: `A depends on B` (A waits), `A before B` (B waits).
_WAITS = (
    r"(?:depends?|dependent)\s+(?:only\s+)?(?:up)?on|requires?|needs?|after|blocked\s+by|"
    r"waits?\s+(?:for|on)|deps\s*:|dependencies\s*:|prerequisites?\s*:"
)
_GOES_FIRST = (
    r"before|blocks?|unblocks?|precedes?|prerequisite\s+(?:for|of|to)|"
    r"(?:needed|required)\s+(?:for|by)|gates?"
)
_VERB = re.compile(rf"\b(?:(?P<waits>{_WAITS})|(?P<first>{_GOES_FIRST}))(?![\w-])", re.I)
_ARROW = re.compile(r"\s*(?:-+>|\u2192|\u27f6|=>|\u21d2)\s*")
_PARALLEL = re.compile(
    r"\bparallel|\bindependent|\bconcurrent|\bsimultaneous|\balongside\b|\btogether\b"
    r"|\u2225|\[P\]",
    re.I,
)
# Said of tasks, and no statement of order to read: the file's order already says it.
_UNDERSTOOD = re.compile(
    r"\bsequential|\bin order\b|\bone after another\b|\bno\b[\w\s-]*\bdependenc", re.I
)
# A phase named instead of tasks: `depends on Foundational`, `blocks the stories`.
_PHASE_WORDS = re.compile(
    r"\b(?:phases?\s*\d|setup|foundation|polish|stor(?:y|ies)|US\s?\d|previous|preceding|prior)",
    re.I,
)
_FILLER = frozenset(
    ["the", "all", "of", "both", "task", "tasks", "completing", "completion", "finishing", "every"]
)
_LABEL = re.compile(rf"^[\s*-]*{_ID_LIST.pattern}\s*:")
_STARTS = re.compile(r"^\s*(?:starts|begins|has started|is started|kicks off)\b", re.I)
_PAREN = re.compile(r"\(([^()]*)\)")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z*`(])|\s*;\s*")
_WORDS = re.compile(r"[A-Za-z]{2,}")


@dataclass
class PhaseClaim:
    """`US1 (T009-T014) depends on Foundational`: tasks said to wait for phases it names (or
    to go before them), held when phase order already runs those phases first (or after)."""

    tasks: list[str]
    waits: bool
    named: str
    clause: str
    parallel: list[str]  # said to run in parallel too: free only if the claim holds


@dataclass
class Reading:
    """What a text says of the order of tasks."""

    pairs: list[tuple[str, str]] = field(default_factory=list)  # (waits, for whom)
    parallel: list[str] = field(default_factory=list)  # said to run beside the others
    unread: list[str] = field(default_factory=list)  # clauses naming tasks, not read
    phases: list[PhaseClaim] = field(default_factory=list)

    def add(self, other: Reading) -> None:
        self.pairs += other.pairs
        self.parallel += other.parallel
        self.unread += other.unread
        self.phases += other.phases


def expand(text: str) -> list[str]:
    """Task ids in `text`, a range like T004-T007 standing for every id in it."""
    ids: list[str] = []
    for match in _RANGE.finditer(text):
        first, last = match[1], match[2]
        if first[-1].isalpha() or last[-1].isalpha():
            continue  # T012a-T012c: no numbers between to count
        low, high = int(first[1:]), int(last[1:])
        if 0 <= high - low <= 500:
            ids += [f"T{n:0{len(first) - 1}d}" for n in range(low, high + 1)]
    return list(dict.fromkeys([*ids, *_IDS.findall(text)]))


def arrow_pairs(text: str) -> list[tuple[str, str]]:
    """(left, right) of each arrow `text` writes between task ids: ids right at the arrow,
    a note in parentheses aside (`T005 (port) -> T007/T008`); `[x]->[~]` is none."""
    parts = _ARROW.split(_plain(text))
    found = []
    for left, right in itertools.pairwise(parts):
        before, after = _lists(left), _lists(right)
        if (
            before
            and after
            and _at_arrow(left[before[-1][1] :])
            and _at_arrow(right[: after[0][0]])
        ):
            found += [(a, b) for a in expand(before[-1][2]) for b in expand(after[0][2])]
    return found


def _at_arrow(gap: str) -> bool:
    """Whether only punctuation and notes in parentheses stand between ids and an arrow
    (or, before the first ids of a chain, a label like `Phase 2:`)."""
    gap = _PAREN.sub("", gap)
    return not _WORDS.search(gap) or bool(re.fullmatch(r"[^:]*:\s*", gap))


def read(text: str, subject: list[str] | None = None, arrows_wait: bool = False) -> Reading:
    """Every statement of `text`. In a task's own text, `subject` is that task: a statement
    is said of it unless it opens with other ids (`depends on T001`, `to pass T006 — depends
    on T005`, but `(T018 depends on T012)`); `arrows_wait` reads `A -> B` as A waiting for B,
    as files whose arrows point back to earlier tasks mean it."""
    reading = Reading()
    main = _plain(text)
    for paren in reversed(list(_PAREN.finditer(main))):
        inner = paren[1]
        if _VERB.search(inner) or _ARROW.search(inner) or _PARALLEL.search(inner):
            before = _lists(main[: paren.start()])
            main = main[: paren.start()] + " " + main[paren.end() :]
            if before:  # `T009/T010/T011 (parallel after T008)`: said of the ids before it
                reading.add(_clauses(inner, expand(before[-1][2]), arrows_wait, False))
            else:
                reading.add(_clauses(inner, subject, arrows_wait, True))
    reading.add(_clauses(main, subject, arrows_wait, True))
    return reading


def _plain(text: str) -> str:
    return re.sub(r"[*`]", "", text)


def _lists(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m[0]) for m in _ID_LIST.finditer(text)]


def _clauses(text: str, subject: list[str] | None, arrows_wait: bool, own: bool) -> Reading:
    reading = Reading()
    for clause in _SENTENCE.split(text):
        if not _ARROW.search(clause):
            reading.add(_statement(clause, subject, own))
            continue
        chains = re.split(r",\s+", clause)
        if not all(_ARROW.search(chain) for chain in chains):
            chains = [clause]  # `T001 -> T002, T003 -> T004` is two chains; else one
        for chain in chains:
            reading.add(_arrows(chain, arrows_wait))
    return reading


def _arrows(clause: str, arrows_wait: bool) -> Reading:
    """`T001 -> T002/T003 -> T004`: each arrow between ids; one with no ids on a side
    (`T005 -> consumed by all stories`) is unread."""
    parts = [p for p in _ARROW.split(clause) if p.strip()]
    pairs = [(a, b) if arrows_wait else (b, a) for a, b in arrow_pairs(clause)]
    if any(_IDS.search(p) for p in parts) and not all(_IDS.search(p) for p in parts):
        return Reading(pairs=pairs, unread=[clause.strip()])
    return Reading(pairs=pairs)


def _statement(clause: str, subject: list[str] | None, own: bool) -> Reading:
    """The statements of one clause. `subject` waits where no ids come before a verb; where
    `own` (a task's text), also where the ids before it do not open the clause."""
    lists = _lists(clause)
    verbs = list(_VERB.finditer(clause))
    parallel = _PARALLEL.search(clause)
    reading = Reading()
    if parallel:  # the ids before `parallel`, in `T010, T011 are parallel with T005-T009` too
        upto = len(clause) if parallel[0] == "\u2225" else parallel.start()  # `T006 ∥ T004`: both
        reading.parallel = [i for s, _, ids in lists if s < upto for i in expand(ids)]
    if not verbs:
        if clause.lstrip().startswith("|"):
            return reading  # a table row tells which task serves what, not their order
        if _LABEL.match(clause):
            return reading  # `- T008: LoginHandler unit tests` names a task, says no order
        if lists and not parallel and not _UNDERSTOOD.search(clause) and _words_besides_ids(clause):
            reading.unread.append(clause.strip())
        return reading
    # The ids between two verbs: the first list is the object of the one before, the last
    # the subject of the one after; one list alone is split at its last comma.
    starts = [0, *(v.end() for v in verbs)]
    ends = [*(v.start() for v in verbs), len(clause)]
    gaps = [
        [x for x in lists if x[0] >= a and x[1] <= b] for a, b in zip(starts, ends, strict=True)
    ]
    unread = False
    carried: list[str] = []
    for n, verb in enumerate(verbs):
        here, there = gaps[n], gaps[n + 1]
        shared = n and len(here) == 1  # the object of the verb before, and maybe our subject
        right_before = bool(here) and not clause[here[-1][1] : verb.start()].strip()
        if n == 0 and subject and (not here or (own and not _leads(clause, here[-1]))):
            waiting = list(subject)  # `to pass T006 — depends on T005`: the task's own
        elif not here:
            waiting = []
        elif shared and (_coordinated(clause, here[0], verb) or (own and not right_before)):
            # `depends on T001 and blocks T005`, `before saving, to pass T006 — depends on
            # T006`: the same subject
            waiting = carried
        elif shared:
            waiting = expand(_split_last(here[0][2])[1])  # `on T012, T020 depends on T014`
        else:
            waiting = expand(here[-1][2])
        carried = waiting
        if not there:
            others = []
        elif (
            n + 1 < len(verbs)
            and len(there) == 1
            and not _coordinated(clause, there[0], verbs[n + 1])
        ):
            others = expand(_split_last(there[0][2])[0])
        else:
            others = expand(there[0][2])
        if there and not _object_follows(clause[verb.end() : there[0][0]]):
            others = []  # `before persisting, to pass T018`: T018 is not what comes after
        if there and _STARTS.match(clause[there[0][1] :]):
            others = []  # `after T005 starts`: a start, not an end, to wait for
        named = clause[verb.end() : ends[n + 1]]
        if waiting and not there and _PHASE_WORDS.search(named):
            claim = PhaseClaim(waiting, bool(verb["waits"]), named, clause.strip(), [])
            claim.parallel, reading.parallel = reading.parallel, []
            reading.phases.append(claim)
            continue
        naming = clause[starts[n] : verb.start()]  # `User Story 4 - depends on ... (T018)`
        if not waiting and others and not here and _PHASE_WORDS.search(naming):
            claim = PhaseClaim(others, not verb["waits"], naming, clause.strip(), [])
            claim.parallel, reading.parallel = reading.parallel, []
            reading.phases.append(claim)
            continue
        if not waiting or not others:
            unread = unread or bool(here or there)
            continue
        for a in waiting:
            for b in others:
                pair = (a, b) if verb["waits"] else (b, a)
                if pair[0] != pair[1]:
                    reading.pairs.append(pair)
    if unread:  # `T016 parallel after their SQL files`: not free of what it waits for
        reading.unread.append(clause.strip())
        reading.parallel = []
    return reading


def _object_follows(gap: str) -> bool:
    """Whether the ids after a verb are its object: right after it (`depends on: T001`,
    `after tasks T001-T003`), or in parentheses after a name (`before implementation
    (T012-T023)`), not further on in another clause (`before persisting, to pass T018`)."""
    if re.search(r"[,;!?]|\.(?:\s|$)", gap):  # another clause, not `state.ts (T018)`
        return False
    words = [w.lower() for w in _WORDS.findall(gap)]
    named = gap.rstrip().endswith("(") and len(words) <= 4
    return named or all(w in _FILLER for w in words)


def _leads(clause: str, ids: tuple[int, int, str]) -> bool:
    """Whether `ids` open the clause: `T018 depends on T012`, not `to pass T006 — depends`."""
    return not _WORDS.search(clause[: ids[0]])


def _coordinated(clause: str, ids: tuple[int, int, str], verb: re.Match[str]) -> bool:
    """Whether only `and` or a comma stands between `ids` and the next verb: the verb says
    more of the same subject, and `ids` are the last verb's object whole."""
    return bool(re.fullmatch(r"\s*(?:,|&|and|,\s*and)\s*", clause[ids[1] : verb.start()]))


def _split_last(ids: str) -> tuple[str, str]:
    """`T012, T020` as (`T012`, `T020`): the head for one statement, the tail for the next."""
    parts = re.split(r"\s*(?:,\s*(?:and\s+)?|\s+and\s+)\s*", ids)
    if len(parts) < 2:
        return ids, ids
    return ", ".join(parts[:-1]), parts[-1]


def _words_besides_ids(clause: str) -> bool:
    return bool(_WORDS.search(_IDS.sub(" ", clause)))
