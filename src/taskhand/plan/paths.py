"""Whether two tasks' `paths` may name a common file: lint asks it of a dependency between
tasks, the scheduler of tasks it would run side by side. A pair it cannot tell apart counts
as meeting."""

from __future__ import annotations

import re
from collections.abc import Iterable

_WILDCARD = re.compile(r"[*?\[]")


def meet(first: Iterable[str], second: Iterable[str]) -> list[str]:
    """The patterns of `first` that may name a file one of `second` names ([] when apart)."""
    others = list(second)
    return [a for a in dict.fromkeys(first) if any(may_overlap(a, b) for b in others)]


def may_overlap(a: str, b: str) -> bool:
    """Whether two `paths` globs may name a common file: yes unless their literal parts (up to
    the first wildcard) part ways, so a pair it cannot tell apart counts as overlapping."""
    left, right = _literal(a), _literal(b)
    if not left or not right or left == right:
        return True
    if not _WILDCARD.search(a) and not _WILDCARD.search(b):  # the same, or a folder of the other
        return left.startswith(right + "/") or right.startswith(left + "/")
    return left.startswith(right) or right.startswith(left)


def _literal(pattern: str) -> str:
    text = pattern.strip().removeprefix("./").lstrip("/")
    cut = _WILDCARD.search(text)
    return text[: cut.start()] if cut else text.rstrip("/")
