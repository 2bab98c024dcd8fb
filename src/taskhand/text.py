"""Text made safe to show and kept short: `printable` is the one rule for text from plans,
agents, file names, git and the store (no escape sequence, control character or bidi override
reaches a terminal); `dumps` the one JSON writer (the same characters escaped, never raw);
`cap` and `shorten` the one rule for cutting text down to a size; `plural` the one way a
count is written ("1 phase", "2 phases"); `utf16` tells text a Windows tool saved as UTF-16.

A base leaf: imports nothing of taskhand.
"""

from __future__ import annotations

import json
import re
from typing import Any

# Escape sequences, 7-bit (ESC ...) and 8-bit (a C1 introducer), removed whole with their
# payload. No repeated class holds ESC or C1, so a match that fails stops before the next
# place one could start: the work stays linear, however long and hostile the text.
_STRING = r"(?:\x1b[PX\]^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x80-\x9f]*(?:\x07|\x1b\\|\x9c)"
_CSI = r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
_SHORT = r"\x1b[ -/]*[0-~]"  # two-character escapes, and charset designations (ESC ( B)
_SEQUENCE = f"{_STRING}|{_CSI}|{_SHORT}"

# Left after that: C0 controls but newline and tab, DEL, C1, the bidi embeddings, overrides
# and isolates, and lone surrogates (undecodable bytes of a file name, see os.fsdecode).
_UNSAFE = "\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_CHARACTER = f"[{_UNSAFE}]"
_CHARACTER_IN_LINE = f"[{_UNSAFE}\n\t]"
_IN_LINE = {"\n": "\\n", "\t": "\\t"}


def printable(text: str, *, lines: bool = False, name: bool = False) -> str:
    """`text` with every escape sequence and control character removed, safe to print.

    Removed means dropped, not marked: colour codes and carriage returns of tool output are
    what shows up in practice, and the untouched text stays in the store and in `--json`.
    Undecodable bytes of a file name are shown as `\\xNN`. Newline and tab are kept with
    `lines`; without it they are shown as `\\n` and `\\t`, so the text stays one line.

    A `name` (a file's path) loses nothing and reads one way only: when it holds anything
    unsafe, a backslash or a double quote, or starts or ends with a space, it is shown in double
    quotes with each of those escaped (`"a\\nb"` is a name with a line break, `"a\\\\nb"` one
    with a backslash), as git quotes names.
    """
    if name:
        return _quoted(text)
    if text.isprintable():
        return text
    # The patterns compile here, the first time (re keeps them): most text never needs them.
    text = re.sub(_SEQUENCE, "", text)
    return re.sub(_CHARACTER if lines else _CHARACTER_IN_LINE, _unsafe_char, text)


def _unsafe_char(match: re.Match[str]) -> str:
    """How one unsafe character is shown: undecodable bytes as \\xNN, line breaks escaped, the
    rest dropped."""
    char = match.group()
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte os.fsdecode could not decode
        return f"\\x{code - 0xDC00:02x}"
    if 0xD800 <= code <= 0xDFFF:
        return f"\\u{code:04x}"
    return _IN_LINE.get(char, "")


_NAME_UNSAFE = re.compile(f'[{_UNSAFE}\n\t\\\\"]')
_NAME_ESCAPES = {"\n": "\\n", "\t": "\\t", "\r": "\\r", "\\": "\\\\", '"': '\\"'}


def controls(text: str) -> bool:
    """Whether `text` holds a character `printable` never shows as it is: a control character
    (line breaks and tabs included), a bidi override, an undecodable byte."""
    return re.search(f"[{_UNSAFE}\n\t]", text) is not None


def _quoted(name: str) -> str:
    """A file name shown unambiguously (see `printable`)."""
    if not _NAME_UNSAFE.search(name) and name == name.strip(" "):
        return name
    return '"' + _NAME_UNSAFE.sub(_name_char, name) + '"'


def _name_char(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if char in _NAME_ESCAPES:
        return _NAME_ESCAPES[char]
    if 0xDC80 <= code <= 0xDCFF:  # a byte os.fsdecode could not decode
        return f"\\x{code - 0xDC00:02x}"
    # A C0 control is one byte, as in a name that is not UTF-8; the rest are code points.
    return f"\\x{code:02x}" if code < 0x80 else f"\\u{code:04x}"


# JSON escapes C0 itself; DEL, C1, the bidi controls and surrogates it would leave raw.
_JSON_UNSAFE = "[\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"


def dumps(data: Any, indent: int | None = None, compact: bool = False) -> str:
    """`data` as JSON for a terminal or a pipe: readable Unicode, every control escaped;
    `compact`: without a space after separators (for a page, not a person).

    A lone surrogate is not Unicode and strict parsers refuse it: an undecodable byte of a
    file name becomes the text `\\xNN`, as `printable` shows it.
    """
    separators = (",", ":") if compact else None
    text = json.dumps(data, indent=indent, ensure_ascii=False, separators=separators)
    # Safe on the whole document: outside strings, JSON is plain ASCII.
    return re.sub(_JSON_UNSAFE, _json_escape, text)


def _json_escape(match: re.Match[str]) -> str:
    char = match.group()
    if "\ud800" <= char <= "\udfff":
        return _unsafe_char(match).replace("\\", "\\\\")  # the text \xNN, in JSON
    return f"\\u{ord(char):04x}"


CUT = "[... cut for length ...]"


def shorten(text: str, width: int) -> str:
    """`text` as its first `width` characters and "..." when it is longer: a value quoted in a
    message or a transcript stays readable."""
    return text if len(text) <= width else text[:width] + "..."


def cap(text: str, limit: int, *, ends: bool = False) -> str:
    """`text` within about `limit` bytes (UTF-8), marked where it was cut.

    Prose (a prompt's context) keeps its head, ended at a line break when one is near, and
    says it was cut. With `ends`, output keeps its head and its tail, where a command's verdict
    stands, around the count of bytes cut; the whole then stays within `limit`.
    """
    data = text.encode("utf-8", errors="surrogatepass")
    if len(data) <= limit:
        return text
    if ends:
        room = max(0, limit - 40)  # the marker's own size
        head, tail = data[: room // 2], data[len(data) - (room - room // 2) :]
        cut = len(data) - len(head) - len(tail)
        return cut_between(head.decode("utf-8", "ignore"), cut, tail.decode("utf-8", "ignore"))
    kept = data[:limit].decode("utf-8", "ignore")
    line_end = kept.rfind("\n")
    if line_end > limit // 2:
        kept = kept[:line_end]
    return kept.rstrip() + "\n" + CUT


def cut_between(head: str, count: int, tail: str) -> str:
    """The kept head and tail of some output with a line between them saying how many bytes
    were cut."""
    newline = "" if not head or head.endswith("\n") else "\n"
    return f"{head}{newline}[... {count} bytes cut ...]\n{tail}"


def size(n: int) -> str:
    """A number of bytes as a person reads it: `4 GiB`, `512 MiB`, `1.5 GiB`, `100 bytes`."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.1f}".removesuffix(".0") + f" {unit}"
    return f"{n} bytes"


def plural(n: int, noun: str) -> str:
    """'1 task', '2 tasks', '3 dependencies', '1 phase'."""
    if n == 1:
        return f"1 {noun}"
    return f"{n} {noun[:-1]}ies" if noun.endswith("y") else f"{n} {noun}s"


def utf16(data: bytes) -> str | None:
    """The codec of `data` when it is UTF-16 text (Windows tools write it): a byte order mark,
    or a NUL every other byte as ASCII written so has; None when it is not."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return "utf-16"
    head = data[:512]
    if len(head) < 4 or len(head) % 2:
        return None
    if not any(head[1::2]) and all(head[0::2]):
        return "utf-16-le"
    return "utf-16-be" if not any(head[0::2]) and all(head[1::2]) else None
