"""The one rule for cutting text down to a size: prose keeps its head, output its two ends,
a quoted value its first characters; each says it was cut."""

from __future__ import annotations

import re

from taskhand.text import CUT, cap, cut_between, shorten


def test_cap_cuts_at_a_line_end_and_never_splits_a_character() -> None:
    assert cap("short", 100) == "short"
    text = "first line\nsecond line\nthird line\n"
    assert cap(text, 25) == "first line\nsecond line\n" + CUT
    assert cap("ééééé", 5) == "éé\n" + CUT


def test_cap_of_output_keeps_both_ends_within_the_limit() -> None:
    text = "first\n" + "a" * 10_000 + "\nlast\n"
    capped = cap(text, 200, ends=True)
    assert capped.startswith("first\n") and capped.endswith("\nlast\n")
    assert len(capped.encode()) <= 200
    found = re.fullmatch(r"(?s)(.*)\n\[\.\.\. (\d+) bytes cut \.\.\.\]\n(.*)", capped)
    assert found is not None
    head, count, tail = found.groups()
    assert len(head) + int(count) + len(tail) == len(text)  # the true count
    assert cap(text, len(text.encode()), ends=True) == text


def test_the_cut_stands_on_a_line_of_its_own() -> None:
    assert cut_between("head\n", 5, "tail") == "head\n[... 5 bytes cut ...]\ntail"
    assert cut_between("head", 5, "tail") == "head\n[... 5 bytes cut ...]\ntail"
    assert cut_between("", 5, "tail") == "[... 5 bytes cut ...]\ntail"


def test_shorten_keeps_the_first_characters() -> None:
    assert shorten("abc", 3) == "abc"
    assert shorten("abcd", 3) == "abc..."
