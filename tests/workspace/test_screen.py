"""What a result may hold: the walk that finds what git would skip or choke on, and the rules
for the names a result adds."""

from __future__ import annotations

import os
import random
import socket
from pathlib import Path

from taskhand.workspace import screen


def test_the_walk_finds_what_git_cannot_record(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    os.mkfifo(tmp_path / ".git" / "ignored-fifo")  # the workspace's own .git is not walked
    (tmp_path / "src" / "vendor" / "lib").mkdir(parents=True)
    (tmp_path / "src" / "ok.py").write_text("x")
    os.mkfifo(tmp_path / "src" / "pipe")
    (tmp_path / "src" / "vendor" / "lib" / ".git").write_text("gitdir: /elsewhere\n")
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(tmp_path / "sock"))
        (tmp_path / "link-to-fifo").symlink_to(tmp_path / "src" / "pipe")  # a link is fine
        found = screen.strays(tmp_path)
    assert found == [
        ("sock", "a socket, which a result cannot hold"),
        ("src/pipe", "a named pipe (FIFO), which a result cannot hold"),
        ("src/vendor/lib/.git", screen.NESTED),
    ]


def test_the_walk_finds_files_too_large(tmp_path: Path) -> None:
    with (tmp_path / "big.bin").open("wb") as file:
        file.truncate(screen.MAX_FILE_BYTES + 1)  # sparse: no disk used
    (tmp_path / "fine.bin").write_bytes(b"x" * 1000)
    assert screen.strays(tmp_path) == [("big.bin", screen.TOO_BIG)]


def test_the_walk_stops_where_a_path_gets_too_long(tmp_path: Path) -> None:
    name = "a" * 250
    path = tmp_path / name / name / name / name / name
    path.mkdir(parents=True)
    os.mkfifo(path / "pipe")  # below the limit: not reached, the folder above is the finding
    found = screen.strays(tmp_path)
    assert found == [(f"{name}/{name}/{name}/{name}/{name}", screen.TOO_LONG)]


def test_names_a_result_may_not_add() -> None:
    added = [
        "ok/name.py",
        "caf\udce9.txt",
        "a\nb",
        "tab\there",
        "x\x1b[31m",
        "txt.\u202eexe",
        "src/-rf",
        "--help",
        "é/naïve.md",
        "a/" * 600 + "f",
    ]
    found = dict(screen.names(added))
    assert found == {
        "caf\udce9.txt": "its name is not UTF-8",
        "a\nb": "its name holds a control character",
        "tab\there": "its name holds a control character",
        "x\x1b[31m": "its name holds a control character",
        "txt.\u202eexe": "its name holds a control character",
        "src/-rf": screen.DASH,
        "--help": screen.DASH,
        "a/" * 600 + "f": screen.TOO_LONG,
    }


def test_clashes_in_case_or_unicode_form_are_found_when_new() -> None:
    tree = ["README.md", "README.MD", "Docs/a.md", "docs/b.md", "caf\u00e9", "cafe\u0301", "x/y"]
    assert screen.clashes(tree, {"README.MD"}) == [
        ("README.MD", "differs only in case or Unicode form from README.md")
    ]
    # a folder only the added path lies in clashes with the one already there
    assert screen.clashes(tree, {"docs/b.md"}) == [
        ("Docs", "differs only in case or Unicode form from docs")
    ]
    assert screen.clashes(tree, {"cafe\u0301"}) == [
        ("cafe\u0301", "differs only in case or Unicode form from caf\u00e9")
    ]
    # clashes the base already had are not the attempt's doing
    assert screen.clashes(tree, {"x/z"}) == []


def every_clash(paths: list[str], added: set[str]) -> list[screen.Finding]:
    """The rule read plainly: every prefix of every path folded, clashes where one is new."""
    originals: dict[str, set[str]] = {}
    only_added: dict[str, bool] = {}
    for path in paths:
        parts = path.split("/")
        for end in range(1, len(parts) + 1):
            prefix = "/".join(parts[:end])
            originals.setdefault(screen._folded(prefix), set()).add(prefix)
            if end < len(parts):
                only_added[prefix] = only_added.get(prefix, True) and path in added
    found = []
    for same in originals.values():
        if len(same) > 1 and any(p in added or only_added.get(p, False) for p in same):
            first, *others = sorted(same)
            shown = ", ".join(screen.printable(o, name=True) for o in others)
            found.append((first, f"differs only in case or Unicode form from {shown}"))
    return sorted(found)


def test_clashes_follow_only_the_folders_an_added_path_could_clash_in() -> None:
    """The quick walk (most paths stop at their first folder) finds what reading every
    prefix of every path finds, on trees made to clash at every depth."""
    randomly = random.Random(7)
    names = ["a", "A", "b", "caf\u00e9", "cafe\u0301", "Docs", "docs", "x"]
    for _ in range(300):
        paths = sorted(
            {"/".join(randomly.choices(names, k=randomly.randint(1, 4))) for _ in range(12)}
        )
        paths = [p for p in paths if not any(q.startswith(p + "/") for q in paths)]  # files
        added = set(randomly.sample(paths, randomly.randint(1, 3)))
        assert screen.clashes(paths, added) == every_clash(paths, added), (paths, added)


def test_the_reason_shows_each_name_one_way_and_cuts_long_ones() -> None:
    found = [("a\nb", "its name holds a control character"), ("b" * 2000, screen.TOO_LONG)]
    reason = screen.refusal(found)
    assert reason.startswith(
        'the workspace\'s files were not taken: "a\\nb": its name holds a control character; '
        + "b" * 120
        + "...: its path is longer"
    )
    assert "\n" not in reason and "(fix: " in reason
