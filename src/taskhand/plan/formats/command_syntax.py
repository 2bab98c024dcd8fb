"""Shell syntax in a check's command, which no shell will ever see.

A check is split like a shell would split it, but run without one: a bare `|`, `&&`, `>`
or `$(...)` reaches the program as an argument, and `$HOME`, `~` or `*.py` are not expanded.
This scanner finds such text outside quotes (where a shell would have acted on it).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
# Characters any finding needs; most commands hold none, and skip the scan.
_SPECIAL = re.compile(r"[|&;<>$`*?~#=]")
_VARIABLE = re.compile(r"\$(?:[A-Za-z_][A-Za-z0-9_]*|\{[^}]*\}?|[0-9#?@*!$-])")


@dataclass(frozen=True)
class ShellSyntax:
    """One piece of shell syntax: the text as written, what a shell would do with it."""

    text: str
    what: str
    # True when it changes what runs (a pipe, a list, a redirection, a substitution); False
    # when the program only receives an argument unexpanded (a variable, a glob, a tilde).
    changes_what_runs: bool


def runs_through_shell(argv: tuple[str, ...]) -> bool:
    """Whether the check hands a script to a shell itself (`sh -c '...'`)."""
    return bool(argv) and posixpath.basename(argv[0]) in SHELLS and "-c" in argv[1:3]


def shell_syntax(command: str, through_shell: bool = False) -> list[ShellSyntax]:
    """Every piece of shell syntax in `command` that a shell would act on, in order.

    Inside double quotes only substitutions count, and not when `through_shell` (the
    shell the check starts expands them there itself).
    """
    if not _SPECIAL.search(command):
        return []
    found: list[ShellSyntax] = []
    words = _words(command)
    for index, word in enumerate(words):
        raw = "".join(c for c, _ in word)
        assignment = _ASSIGNMENT.match(raw) if index == 0 else None
        if assignment and all(quote == "" for _, quote in word[: assignment.end()]):
            found.append(ShellSyntax(raw, "a variable assignment", True))
            continue
        found.extend(_in_word(word, raw, through_shell))
    return found


def _in_word(word: list[tuple[str, str]], raw: str, through_shell: bool) -> list[ShellSyntax]:
    found: list[ShellSyntax] = []
    text = "".join(c for c, _ in word)
    quotes = "".join(q or " " for _, q in word)
    if quotes[:1] == " " and text.startswith("#"):
        return [ShellSyntax(raw, "a comment", True)]
    i = 0
    while i < len(text):
        char, quote = text[i], quotes[i]
        pair = text[i : i + 2] if quotes[i : i + 2] == quote * 2 else char
        if quote == " " and char in "|&;<>":
            operator = _operator(text, quotes, i)
            found.append(_OPERATORS[operator[0]](raw if operator[0] in "<>" else operator))
            i += len(operator)
            if operator[0] in "<>":
                break  # the whole word is one redirection
            continue
        if quote in (" ", '"') and not (quote == '"' and through_shell):
            if pair == "$(" or char == "`":
                found.append(ShellSyntax(raw, "a command substitution", quote == " "))
                break
            variable = _VARIABLE.match(text, i) if char == "$" else None
            if variable and all(q == quote for q in quotes[i : variable.end()]):
                found.append(ShellSyntax(variable.group(0), "a variable", False))
                i = variable.end()
                continue
        if quote == " " and (char in "*?" or (char == "~" and i == 0)):
            found.append(ShellSyntax(raw, "a glob" if char != "~" else "a tilde", False))
            break
        i += 1
    return found


def _operator(text: str, quotes: str, i: int) -> str:
    """The operator starting at `i`: `||`, `&&`, `>>`, `2>&1`'s `>&1`, ... as written."""
    end = i + 1
    while end < len(text) and quotes[end] == " " and text[end] in "|&;<>" and end - i < 2:
        end += 1
    return text[i:end]


_OPERATORS = {
    "|": lambda t: ShellSyntax(t, "a pipe" if t == "|" else "an 'or' list", True),
    "&": lambda t: ShellSyntax(t, "an 'and' list" if t == "&&" else "a background job", True),
    ";": lambda t: ShellSyntax(t, "a command separator", True),
    "<": lambda t: ShellSyntax(t, "a redirection", True),
    ">": lambda t: ShellSyntax(t, "a redirection", True),
}


def _words(command: str) -> list[list[tuple[str, str]]]:
    """Split as a POSIX shell would, keeping for each character the quote it stood in.

    The quote is '' for a bare character, "'" or '"' inside quotes, and '\\' for a
    character a backslash escaped; an unterminated quote simply runs to the end.
    """
    words: list[list[tuple[str, str]]] = []
    current: list[tuple[str, str]] = []
    started = False
    quote = ""
    i = 0
    while i < len(command):
        char = command[i]
        if quote == "'":
            if char == "'":
                quote = ""
            else:
                current.append((char, "'"))
        elif quote == '"':
            if char == '"':
                quote = ""
            elif char == "\\" and command[i + 1 : i + 2] in ('"', "\\", "$", "`"):
                i += 1
                current.append((command[i], "\\"))
            else:
                current.append((char, '"'))
        elif char in "'\"":
            quote, started = char, True
        elif char == "\\" and i + 1 < len(command):
            i += 1
            current.append((command[i], "\\"))
        elif char.isspace():
            if current or started:
                words.append(current)
            current, started = [], False
        else:
            current.append((char, ""))
        i += 1
    if current or started:
        words.append(current)
    return words
