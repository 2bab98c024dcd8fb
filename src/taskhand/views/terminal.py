"""What taskhand prints: text from plans, agents, file names, git and the store made safe.

`printable` (in `taskhand.text`) is the one rule for text. `dumps` is the one JSON writer: the
same characters escaped, never raw.
"""

from __future__ import annotations

import json
import re
from typing import Any

import click
from rich.text import Text

from taskhand.text import printable, unsafe_char


def echo(text: str, err: bool = False) -> None:
    """Print lines of text through click, made printable."""
    click.echo(printable(text, lines=True), err=err)


def rich_text(text: object, *, lines: bool = False) -> Text:
    """Text for rich that is shown literally: `[red]` or `[link=...]` in it stays as typed."""
    return Text(printable(str(text), lines=lines))


# JSON escapes C0 itself; DEL, C1, the bidi controls and surrogates it would leave raw.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def dumps(data: Any, indent: int | None = None) -> str:
    """`data` as JSON for a terminal or a pipe: readable Unicode, every control escaped.

    A lone surrogate is not Unicode and strict parsers refuse it: an undecodable byte of a
    file name becomes the text `\\xNN`, as `printable` shows it.
    """
    text = json.dumps(data, indent=indent, ensure_ascii=False)
    # Safe on the whole document: outside strings, JSON is plain ASCII.
    return _JSON_UNSAFE.sub(_json_escape, text)


def _json_escape(match: re.Match[str]) -> str:
    char = match.group()
    if "\ud800" <= char <= "\udfff":
        return unsafe_char(match).replace("\\", "\\\\")  # the text \xNN, in JSON
    return f"\\u{ord(char):04x}"
