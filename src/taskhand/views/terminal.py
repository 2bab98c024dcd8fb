"""What taskhand prints: text from plans, agents, file names, git and the store made safe.

`printable` and `dumps` (in `taskhand.text`) are the one rule for text and for JSON; this
module prints through them with click and rich.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from taskhand.text import printable

if TYPE_CHECKING:  # rich loads with the commands that print through it, not with every one
    from rich.text import Text


def echo(text: str, err: bool = False) -> None:
    """Print lines of text through click, made printable."""
    click.echo(printable(text, lines=True), err=err)


def rich_text(text: object, *, lines: bool = False) -> Text:
    """Text for rich that is shown literally: `[red]` or `[link=...]` in it stays as typed."""
    from rich.text import Text

    return Text(printable(str(text), lines=lines))
