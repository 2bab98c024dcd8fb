"""The order of a Spec Kit tasks.md: what its Dependencies, Execution Order and Parallel
sections write (read statement by statement in speckit_statements.py; a statement naming a
phase is held when phase order says it), and the implicit order within a phase, which never
overrides what the file writes.
"""

from __future__ import annotations

import re

from taskhand.plan.imports import speckit_statements as statements
from taskhand.plan.imports.draft import Dropped, Item

_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d{1,3}[.)])\s")
_FENCE = re.compile(r"^\s*(```|~~~)")


def order_phase(section: list[Item], parallel: set[str]) -> None:
    """A sequential task waits for the sequential task before it and the [P] ones between,
    unless the file says the other way round: an implicit wait that would close a cycle with
    what the file writes is left out."""
    by_key = {item.key: item for item in section}
    previous: str | None = None
    between: list[str] = []
    for item in section:
        if item.key in parallel:
            between.append(item.key)
            continue
        implicit = [k for k in [*([previous] if previous else []), *between] if k != item.key]
        kept = [k for k in implicit if not _waits_for(by_key, k, item.key)]
        item.deps = [*kept, *[k for k in item.deps if k not in kept]]
        previous, between = item.key, []


def _waits_for(by_key: dict[str, Item], start: str, target: str) -> bool:
    """Whether task `start` already waits, through any chain in this phase, for `target`."""
    seen: set[str] = set()
    stack = [start]
    while stack:
        key = stack.pop()
        if key == target:
            return True
        if key in seen or key not in by_key:
            continue
        seen.add(key)
        stack += by_key[key].deps
    return False


def written(
    sections: list[tuple[str, list[tuple[int, str]], bool]],
    phases: list[str | None],
    by_key: dict[str, Item],
    dropped: list[Dropped],
    name: str,
) -> statements.Reading:
    """What the file's order sections, (heading, lines, an example's), write of the order;
    each line naming tasks that cannot be read is reported with its number. In a Parallel
    Example's fence, what reads as a statement (`T016 (depends on T013-T015)`) is taken, and
    the rest (commands, batches suggested) left unreported. `phases` holds the heading of
    each section that is a phase, by its index."""
    lines = [joined for _, text, examples in sections for joined in _joined(text, examples)]
    arrows = [p for _, line, _ in lines for p in statements.arrow_pairs(line)]
    back = sum(1 for a, b in arrows if _number(a) > _number(b))
    arrows_wait = back > len(arrows) - back  # most arrows point back: `T025 -> T021` waits
    told = statements.Reading()
    for number, line, quiet in lines:
        reading = statements.read(line, None, arrows_wait)
        told.pairs += reading.pairs
        if quiet:
            continue
        held = [claim for claim in reading.phases if _held(claim, phases, by_key)]
        told.parallel += [*reading.parallel, *(t for claim in held for t in claim.parallel)]
        unread = [*reading.unread, *(c.clause for c in reading.phases if c not in held)]
        for clause in dict.fromkeys(unread):
            whole = clause.strip(" -*") == re.sub(r"[*`]", "", line).strip(" -*")
            what = "a line" if whole else "a statement"
            dropped.append(
                Dropped(
                    f"{name}:{number}",
                    f"kept as text only: {what} naming tasks in no dependency form taskhand "
                    f"reads: {(line.strip() if whole else clause)!r}",
                )
            )
    return told


def _held(claim: statements.PhaseClaim, phases: list[str | None], by_key: dict[str, Item]) -> bool:
    """Whether phase order already holds what a statement says of tasks and phases it names:
    `US3 (T017-T018) depends on US1`, `Foundational (T001-T004) blocks the stories`."""
    at = {by_key[t].phase for t in claim.tasks if t in by_key}
    named = [n for n, heading in enumerate(phases) if heading and _named(claim.named, heading)]
    if not at or not named:
        return False
    return max(named) < min(at) if claim.waits else min(named) > max(at)


def _named(named: str, heading: str) -> bool:
    """Whether the phase of `heading` is one `named` names."""
    heading = heading.lower()
    for number in re.findall(r"phases?\s*(\d+(?:\.\d+)?)", named, re.I):
        if re.match(rf"phase\s+{re.escape(number)}(?![\d.])", heading):
            return True
    for story in re.findall(r"\b(?:US|user story)\s?(\d+)", named, re.I):
        if re.search(rf"\b(?:us|user story)\s?{story}\b", heading):
            return True
    if re.search(r"previous|preceding|prior", named, re.I):
        return True
    stories = re.search(r"\b(?:us\d|user story)", heading)
    words = [w.lower() for w in re.findall(r"setup|foundation|polish|stories", named, re.I)]
    return any(w in heading or (w == "stories" and stories) for w in words)


def _joined(text: list[tuple[int, str]], examples: bool) -> list[tuple[int, str, bool]]:
    """The section's lines, a wrapped line joined to the one it goes on from, and a line
    ending in an arrow to the next: one statement may span several. In a fence (a diagram),
    each line stands alone, and in an example's fence it is quiet: no statement is missed."""
    joined: list[tuple[int, str, bool]] = []
    fence = False
    for number, line in text:
        if _FENCE.match(line):
            fence = not fence
            continue
        wrapped = not fence and line[:1].isspace() and line.strip() and not _LIST_ITEM.match(line)
        goes_on = joined and re.search(r"(?:->|\u2192)\s*$", joined[-1][1])
        if joined and (wrapped or goes_on):
            last = joined[-1]
            joined[-1] = (last[0], f"{last[1].rstrip()} {line.strip()}", last[2])
        elif line.strip():
            joined.append((number, line, fence and examples))
    return joined


def names_tasks(text: list[tuple[int, str]]) -> bool:
    """Whether a Parallel Example section says something of tasks outside its fences."""
    return any(statements.expand(line) for _, line, quiet in _joined(text, True) if not quiet)


def _number(key: str) -> int:
    return int(re.sub(r"\D", "", key) or 0)
