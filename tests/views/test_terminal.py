"""The output sanitizer: no escape sequence, control character or bidi override that a plan,
an agent or a file name holds survives `printable`; `dumps` carries them escaped.

What the commands print is tested in test_cli_output.py, with the text defined here.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
from types import FrameType

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console

from taskhand.text import dumps, printable
from taskhand.views.terminal import rich_text

# What must never reach a terminal: C0 but newline and tab, DEL, C1, bidi controls.
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

OSC52 = "\x1b]52;c;aGk=\x07"  # write "hi" to the clipboard
OSC0 = "\x1b]0;pwned\x1b\\"  # set the window title
CSI = "\x1b[2J\x1b[31m"  # clear the screen, then red
C1 = "\x9b2J\x9d0;eight-bit title\x07"
MARKUP = "[red]red[/red] [link=https://evil.example]link[/link]"
EVIL = f"{OSC52}{OSC0}{CSI}{C1}{MARKUP}\u202e"
EVIL_NAME = EVIL.replace("/", "")  # as a file name


def assert_clean(text: str) -> None:
    found = sorted(set(UNSAFE.findall(text)))
    assert not found, f"{found} reached the terminal in:\n{text!r}"


SEQUENCES = {
    "csi": "\x1b[2J",
    "csi-private": "\x1b[?1049h",
    "csi-intermediate": "\x1b[1 q",
    "sgr": "\x1b[38;5;196m",
    "osc-bel": "\x1b]52;c;aGk=\x07",
    "osc-st": "\x1b]0;title\x1b\\",
    "osc-8bit-st": "\x1b]8;;https://evil.example\x9c",
    "dcs": "\x1bPq#0;2;0;0;0#0~~\x1b\\",
    "sos": "\x1bXhidden\x1b\\",
    "pm": "\x1b^hidden\x1b\\",
    "apc": "\x1b_Gf=100;payload\x1b\\",
    "two-char": "\x1b7",
    "reset": "\x1bc",
    "charset": "\x1b(0",
    "8bit-csi": "\x9b2J",
    "8bit-osc": "\x9d52;c;aGk=\x07",
    "8bit-osc-st": "\x9d0;title\x9c",
    "8bit-dcs": "\x90q#0~~\x9c",
    "8bit-apc": "\x9fpayload\x1b\\",
}


@pytest.mark.parametrize("sequence", SEQUENCES.values(), ids=SEQUENCES.keys())
def test_each_escape_sequence_is_removed_whole(sequence: str) -> None:
    assert printable(f"before{sequence}after") == "beforeafter"
    assert printable(f"one\n{sequence}two", lines=True) == "one\ntwo"


@pytest.mark.parametrize("code", [*range(0x00, 0x20), *range(0x7F, 0xA0)])
def test_every_other_control_character_is_dropped(code: int) -> None:
    char = chr(code)
    if char in "\n\t":
        assert printable(f"a{char}b", lines=True) == f"a{char}b"
        assert printable(f"a{char}b") == ("a\\nb" if char == "\n" else "a\\tb")
    else:
        # A newline after it: nothing can read it as the start of a sequence.
        assert printable(f"a{char}\nb", lines=True) == "a\nb"


def test_carriage_return_and_backspace_cannot_overwrite_a_line() -> None:
    assert printable("rm -rf ~\rls -l   ", lines=True) == "rm -rf ~ls -l   "
    assert printable("safe\b\b\b\bevil") == "safeevil"


def test_bidi_overrides_and_isolates_are_dropped() -> None:
    trojan = "access = 'user\u202e \u2066// admin\u2069 \u2066'"
    assert printable(trojan) == "access = 'user // admin '"
    for code in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]:
        assert printable(f"a{chr(code)}b") == "ab"


def test_ordinary_unicode_is_kept() -> None:
    text = "naïve café, 日本語, עברית, العربية, Ελληνικά, 🎉, 👩‍💻, e\u0301, [brackets] ~ ^ _"
    assert printable(text) == text
    assert printable(f"{text}\n\t{text}", lines=True) == f"{text}\n\t{text}"


def test_undecodable_bytes_of_a_file_name_are_shown() -> None:
    name = os.fsdecode(b"caf\xe9-\x9b2J.md")
    assert printable(name) == "caf\\xe9-\\x9b2J.md"


def test_an_unterminated_sequence_loses_its_introducer_not_the_text() -> None:
    assert printable("\x1b]0;no terminator, still shown") == "0;no terminator, still shown"
    assert printable("\x1b[12;34") == "12;34"
    assert printable("trailing\x1b") == "trailing"


def test_a_sequence_split_across_prints_stays_harmless() -> None:
    whole = f"x{OSC52}{CSI}{C1}y"
    for cut in range(len(whole) + 1):
        assert_clean(printable(whole[:cut]) + printable(whole[cut:]))


def test_removing_one_sequence_does_not_make_another() -> None:
    for text in ["\x1b\x1b[31m]0;x\x07", "\x1b\x00[2J", "\x1b\u202e]0;x\x07", "\x9b\x1b[2J"]:
        shown = printable(text)
        assert_clean(shown)
        assert printable(shown) == shown


PIECES = ["\x1b", "\x9b", "\x9d", "\x9c", "\x07", "\\", "[", "]", "P", ";", "m", "\n", "\udc9b"]
HOSTILE = st.text(
    st.sampled_from(PIECES) | st.characters(),
    max_size=60,
)


@given(HOSTILE)
def test_nothing_unsafe_survives_any_text(text: str) -> None:
    for lines in (False, True):
        shown = printable(text, lines=lines)
        assert_clean(shown)
        assert printable(shown, lines=lines) == shown
        shown.encode("utf-8")  # no lone surrogate left to fail the terminal's encoder
    assert "\n" not in printable(text)


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("src/app.py", "src/app.py"),
        ("café/naïve.md", "café/naïve.md"),
        ("a\nT-002 attempt 1: accepted", '"a\\nT-002 attempt 1: accepted"'),
        ("a\\nb", '"a\\\\nb"'),  # a backslash and an n: not the same name as a line break
        ("caf\udce9.txt", '"caf\\xe9.txt"'),  # a byte that is not UTF-8
        ("\u0085", '"\\u0085"'),  # a C1 character: not the byte 0x85
        ("x\x1b]0;title\x07", '"x\\x1b]0;title\\x07"'),
        ("txt.\u202eexe", '"txt.\\u202eexe"'),
        ('say "hi"', '"say \\"hi\\""'),
        (" lead", '" lead"'),
    ],
)
def test_a_file_name_is_shown_one_way_only(name: str, shown: str) -> None:
    """Nothing dropped: two names never show the same, and none spans two lines."""
    assert printable(name, name=True) == shown


@given(st.text(max_size=20), st.text(max_size=20))
def test_different_names_never_show_the_same(one: str, other: str) -> None:
    shown = printable(one, name=True)
    assert_clean(shown)
    assert "\n" not in shown
    if one != other:
        assert shown != printable(other, name=True)


class _Hang(Exception):
    pass


def _hang(signum: int, frame: FrameType | None) -> None:
    raise _Hang


def test_very_long_input_does_not_backtrack() -> None:
    """Inputs that make a careless pattern quadratic. The alarm only stops a hang: each case
    is a fraction of a second linear, and would take hours quadratic."""
    n = 200_000
    cases = {
        "\x1b]" * n: "",
        "\x1b]" + "a" * n: "a" * n,
        "\x1b[" + "1;" * n: "1;" * n,
        "\x1b[1" * n: "1" * n,
        "\x9d" * n + "a": "a",
        "\x1bP" + "\x1b" * n: "",
        ("\x1b]0;" + "x" * 100 + "\x1b ") * 2000: ("0;" + "x" * 100 + " ") * 2000,
    }
    previous = signal.signal(signal.SIGALRM, _hang)
    signal.alarm(120)
    try:
        for text, shown in cases.items():
            assert printable(text) == shown
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_rich_shows_markup_literally() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system="truecolor", width=200)
    console.print(rich_text(EVIL))
    assert out.getvalue() == f"{MARKUP}\n"


def test_json_escapes_controls_and_keeps_the_text() -> None:
    data = {"title": EVIL, "text": "日本語 \u2028\x7f"}
    text = dumps(data, indent=2)
    assert_clean(text)
    assert "日本語" in text and "\\u009b" in text and "\\u202e" in text
    assert json.loads(text) == data


def test_json_shows_undecodable_bytes_as_printable_does() -> None:
    text = dumps([os.fsdecode(b"caf\xe9.md")])
    text.encode("utf-8")  # valid Unicode: strict parsers refuse lone surrogates
    assert json.loads(text) == ["caf\\xe9.md"]
