"""Acceptance criteria that carry a command, in either dialect.

A criterion whose text starts with a code span holding a `$`-prompted command is a machine
check; options in parentheses may follow:

    - `$ pytest -q tests/test_cli.py` passes
    - `$ ./tool --bad-flag` (exit 2, timeout 30s) rejects unknown flags

A parenthesis that starts with another word is prose. Any other text stays a criterion
for the reviewer. Tilth reads the same bullet as plain text.
"""

from __future__ import annotations

import functools
import re
import shlex

from taskhand.plan.model import DEFAULT_CHECK_TIMEOUT, Check, Criterion

_COMMAND_RE = re.compile(
    r"^(`+)\s*\$\s+(?P<cmd>.+?)\s*\1(?!`)\s*(?:\((?P<opts>(?:exit|timeout)\b[^)]*)\))?"
)
_TAG_RE = re.compile(r"^\[(closes|found)\]\s*", re.IGNORECASE)
_SHELL_SYNTAX = re.compile(r"[\"'\\]")
_DURATION_RE = re.compile(r"^(\d+(?:\.\d+)?)\s*(s|sec|m|min|h)?$")
MAX_SECONDS = 7 * 24 * 3600.0
_EXIT_CODE_RE = re.compile(r"^(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])$")
_UNITS = {None: 1.0, "s": 1.0, "sec": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0}


class CriterionError(ValueError):
    """A command criterion that cannot be turned into a check; the text says why."""


def parse_duration(text: str) -> float:
    """Seconds from '90', '90s', '5m' or '1h'."""
    match = _DURATION_RE.match(text.strip().lower())
    if not match:
        raise CriterionError(f"{text!r} is not a duration like 90, 90s, 5m or 1h")
    seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if not 0 < seconds <= MAX_SECONDS:
        raise CriterionError(f"duration {text!r} must be above zero and at most 7 days")
    return seconds


def _command_parts(text: str) -> tuple[str, str] | None:
    """The command of a criterion's text as written and its options, or None."""
    return _match_command(text) if text.startswith("`") else None


# Cached: `validate` asks once when it reads a criterion and again when it checks that the
# command can run, and the match is the dearest step of reading a criterion.
@functools.lru_cache(maxsize=1 << 16)
def _match_command(text: str) -> tuple[str, str] | None:
    match = _COMMAND_RE.match(text)
    return (match.group("cmd"), match.group("opts") or "") if match else None


def command_text(text: str) -> str | None:
    """The command of a criterion's text as written (before splitting), or None."""
    parts = _command_parts(text)
    return parts[0] if parts else None


def parse_criterion(text: str, line: int | None = None) -> Criterion:
    """Turn one bullet's text into a criterion, with a check when it carries a command. A
    leading `[closes]` marks a closing check explicitly; `[found]` a behaviour a person sees
    in the running app, which qa proves with a screenshot."""
    tag = ""
    match = _TAG_RE.match(text)
    if match:
        tag = match.group(1).lower()
    parts = _command_parts(text[match.end() :] if match else text)
    if parts is None:
        return Criterion(text, line=line, tag=tag)
    command, options = parts
    try:
        # Without quotes or escapes, shell splitting is plain whitespace splitting, done fast.
        argv = tuple(shlex.split(command) if _SHELL_SYNTAX.search(command) else command.split())
    except ValueError as exc:
        raise CriterionError(f"command {command!r} cannot be split: {exc}") from None
    if not argv:
        raise CriterionError("the command is empty")
    timeout, exit_code = DEFAULT_CHECK_TIMEOUT, 0
    for option in filter(None, (o.strip() for o in options.split(","))):
        name, _, value = option.partition(" ")
        if name == "exit" and _EXIT_CODE_RE.match(value.strip()):
            exit_code = int(value)
        elif name == "timeout":
            timeout = parse_duration(value)
        else:
            raise CriterionError(f"option {option!r} is not 'exit N' (0-255) or 'timeout 30s'")
    return Criterion(text, Check(argv, timeout, exit_code), line, tag or "closes")
