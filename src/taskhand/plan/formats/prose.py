"""The one rule for writing a person's or an agent's text into a plan file: it stays prose.

A line of it that a reader or an editor of either dialect would take as structure (a heading
that starts a section or a phase, a front matter fence, a code fence, a TaskTrack
`**Field**:`, an overview entry or checkbox `- [ ]`) is written with a backslash before its
first mark, as Markdown escapes it; a line that already starts with backslashes before such a
mark gets one more, so reading takes exactly one off and gives the text back. Line breaks are
written as `\\n`, since the Markdown reader splits lines at every Unicode break and
TaskTrack's at `\\n` only. Text composed inside a section (a plan's `### Review` blocks) is
escaped the same way against the lines its own reader takes as structure, before the section
is escaped as a whole.

A fenced code block is the exception: its opening and closing fences, when both are there, are
written as they are, so the code stays code where the file is shown (a `# comment` in it no
heading); a line inside it that reads as structure is still escaped. The first line is never
taken as a fence: in TaskTrack it follows its field's label.
"""

from __future__ import annotations

import re

STRUCTURE = re.compile(
    r"""
      \#\#(?:\s|$)                     # a task's section, a phase, an overview's end
    | -{3,}\s*$                        # the front matter's fence
    | (?:```|~~~)                      # a code fence, which section edits count
    | \*\*[A-Za-z][A-Za-z\ ]*\*\*:     # a TaskTrack field
    | [*-]\s+\[                        # an overview entry, a checkbox
    """,
    re.VERBOSE,
)
# What TaskTrack's reader and taskhand's edits of its files take as structure: a field, and
# in the overview a phase and an entry. A code fence, a `---` or a `## ` line of a task's
# description is prose there as it stands, and written so, as a person writes it.
_TASKTRACK_TASK = re.compile(r"\*\*[A-Za-z][A-Za-z\ ]*\*\*:")
_TASKTRACK_OVERVIEW = re.compile(
    r"\#\#(?:\s|$) | \*\*[A-Za-z][A-Za-z\ ]*\*\*: | [*-]\s+\[", re.VERBOSE
)
_LINE = re.compile(r"(\s*)(\\*)(.*)", re.DOTALL)
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")


def normal(text: str) -> str:
    """`text` as a reader gives it back: lines broken by `\\n`, no space around the whole."""
    return "\n".join(text.splitlines()).strip()


def escape(
    text: str, structure: re.Pattern[str] = STRUCTURE, read: re.Pattern[str] | None = None
) -> str:
    """`text` (normalised) as it is written into a plan file: each line that would read as
    `structure` gets one more backslash before its mark, and so does each line that starts
    with backslashes before a mark of `read` (default `structure`), what its reader unescapes."""
    lines = normal(text).split("\n")
    code = fences(lines) if structure is STRUCTURE else set()
    return "\n".join(
        line if n in code else _escape_line(line, structure, read or structure)
        for n, line in enumerate(lines)
    )


def escape_tasktrack(text: str, overview: bool = False) -> str:
    """`text` as a TaskTrack task file (or its overview) holds it: escaped against what is
    structure there alone, and read back by `unescape` as every dialect's text is."""
    return escape(text, _TASKTRACK_OVERVIEW if overview else _TASKTRACK_TASK, STRUCTURE)


def unescape(text: str, structure: re.Pattern[str] = STRUCTURE) -> str:
    """The text `escape` wrote, as it was: one backslash fewer before each escaped mark."""
    return "\n".join(_unescape_line(line, structure) for line in text.split("\n"))


def one_line(text: str) -> str:
    """Text for a one-line place (a title, a front matter value, a field's value on its
    label's line): its words with single spaces, so it can start no other line."""
    return " ".join(text.split())


def fences(lines: list[str]) -> set[int]:
    """The indexes of the lines that open and close a fenced code block, in pairs, as Markdown
    reads them: the closing fence of the opening one's mark, at least as long, bare."""
    found: set[int] = set()
    opened: tuple[int, str] | None = None
    for n, line in enumerate(lines[1:], start=1):
        fence = _FENCE.fullmatch(line)
        if fence is None:
            continue
        mark, rest = fence.groups()
        if opened is None:
            if not (mark[0] == "`" and "`" in rest):  # a backtick fence's info has none
                opened = (n, mark)
        elif mark[0] == opened[1][0] and len(mark) >= len(opened[1]) and not rest.strip():
            found |= {opened[0], n}
            opened = None
    return found


def _escape_line(line: str, structure: re.Pattern[str], read: re.Pattern[str]) -> str:
    match = _LINE.fullmatch(line)
    assert match is not None  # the pattern matches every line
    indent, slashes, rest = match.groups()
    marked = structure.match(rest) or (slashes and read.match(rest))
    return f"{indent}\\{slashes}{rest}" if marked else line


def _unescape_line(line: str, structure: re.Pattern[str]) -> str:
    match = _LINE.fullmatch(line)
    assert match is not None
    indent, slashes, rest = match.groups()
    return f"{indent}{slashes[1:]}{rest}" if slashes and structure.match(rest) else line
