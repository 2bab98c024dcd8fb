"""The one base of every expected failure: `UserError` says what went wrong, where, and how to
fix it. The command line (and any other edge) shows it as one line; anything else is a bug.

A base leaf: imports nothing of taskhand.
"""

from __future__ import annotations

FIX = " (fix: "


class UserError(Exception):
    """A failure a person can act on, shown as `where: what (fix: how)`.

    A message already written as `what (fix: how)` may be given whole as `what`: its fix is
    split off, so `str()` gives back exactly the message and `fix` holds the how.
    """

    exit_code = 1  # what the command line exits with; a setup a run cannot start in says 2

    def __init__(self, what: str, *, where: str = "", fix: str = "") -> None:
        if not fix:
            what, fix = split_fix(what)
        self.what, self.where, self.fix = what, where, fix
        super().__init__(self.message)

    @property
    def message(self) -> str:
        text = f"{self.where}: {self.what}" if self.where else self.what
        return f"{text}{FIX}{self.fix})" if self.fix else text


def split_fix(message: str) -> tuple[str, str]:
    """'what (fix: how)' -> ('what', 'how'); a message without a fix keeps all of it."""
    what, marker, fix = message.rpartition(FIX)
    if not marker or not fix.endswith(")"):
        return message, ""
    return what, fix[:-1]
