"""Criteria that carry a command become checks; everything else stays prose."""

from __future__ import annotations

import shlex

import pytest

from taskhand.plan.formats.criteria import CriterionError, parse_criterion
from taskhand.plan.model import DEFAULT_CHECK_TIMEOUT, Check


@pytest.mark.parametrize(
    ("text", "check"),
    [
        ("`$ pytest -q` passes", Check(("pytest", "-q"))),
        ("`$ ./tool --bad` (exit 2, timeout 30s) refuses", Check(("./tool", "--bad"), 30.0, 2)),
        ("`$ make test` (timeout 5m)", Check(("make", "test"), 300.0)),
        ("``$ echo `date` `` prints", Check(("echo", "`date`"))),
        ("`$ python -c 'print(1)'` (the full suite) works", Check(("python", "-c", "print(1)"))),
        ("`cli export` writes JSON", None),
        ("plain prose", None),
        ("`$` alone", None),
    ],
)
def test_parse(text: str, check: Check | None) -> None:
    criterion = parse_criterion(text)
    assert criterion.text == text
    assert criterion.check == check


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("`$ echo 'open` fails", "cannot be split"),
        ("`$ run` (exit two)", "is not 'exit N'"),
        ("`$ run` (exit 256)", "is not 'exit N'"),
        ("`$ run` (timeout soon)", "not a duration"),
        ("`$ run` (timeout 0s)", "above zero"),
        ("`$ run` (timeout 8000000)", "at most 7 days"),
    ],
)
def test_bad_commands_say_why(text: str, reason: str) -> None:
    with pytest.raises(CriterionError, match=reason):
        parse_criterion(text)


def render_command(check: Check) -> str:
    """The canonical bullet prefix for a check, as a person would write it."""
    opts = []
    if check.expected_exit_code != 0:
        opts.append(f"exit {check.expected_exit_code}")
    if check.timeout_seconds != DEFAULT_CHECK_TIMEOUT:
        opts.append(f"timeout {check.timeout_seconds:g}s")
    suffix = f" ({', '.join(opts)})" if opts else ""
    return f"`$ {shlex.join(check.argv)}`{suffix}"


def test_render_is_the_inverse_of_parse() -> None:
    for check in (Check(("pytest", "-q", "tests/a b.py")), Check(("x",), 12.5, 3)):
        parsed = parse_criterion(render_command(check) + " passes").check
        assert parsed == check
    assert "timeout" not in render_command(Check(("x",), DEFAULT_CHECK_TIMEOUT))
