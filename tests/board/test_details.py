"""The drawer's data against a real server over a plan the replay agent ran: the ledger of an
attempt qa rejected and one it passed, each attempt's change file by file within the caps, a
unit's transcript read only where the store says and only inside the state folder, and qa's
screenshot of each `[found]` criterion."""

from __future__ import annotations

import http.client
import json
import sqlite3
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from taskhand.board import diffs
from taskhand.state.paths import StateDir
from taskhand.state.records import Attempt, AttemptStatus
from tests.board.test_app import READ, call, serving
from tests.plans import md_task
from tests.runs import git, make_repo, run_plan, write

# Planted wherever task and agent text reach the drawer: it must stay text and never run.
PLANT = "<script>window.__pwned = 1</script><img src=x onerror=\"document.title='pwned'\">"
CRITERIA = "- `$ test -f toggle.txt` passes\n- [found] the toggle shows in the header\n"
SVG = (
    "<svg xmlns='http://www.w3.org/2000/svg' width='720' height='120'>"
    "<rect width='720' height='120' fill='#1d4ed8'/>"
    "<text x='24' y='70' fill='white' font-size='32'>Bookmarks · dark mode ◐</text></svg>"
)
NAV = '  <h1>Bookmarks</h1>\n  <nav><a href="/">All</a> <a href="/tags">Tags</a></nav>\n'
HEADER = f"<header>\n{NAV}  {PLANT}\n"  # the first attempt's, to which the second adds
BLUE = (29, 78, 216)
BUTTON = '  <button id="toggle" aria-pressed="false">dark mode</button>\n'


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A plain PNG of one colour (what a screenshot file is, to the board)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\0" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def drawer_repo(tmp_path: Path) -> Path:
    """A repository whose full-pipeline plan ran: T-001 (ui) done on its second attempt, after
    qa rejected the first; T-002 waits on the writer's question. Task text, the change and
    the question carry PLANT."""
    files = {
        "src/header.html": f"<header>\n{NAV}</header>\n",
        "plan/overview.md": "# Dark mode\n\n## Goal\nA dark theme.\n",
        "plan/T-001-toggle.md": md_task(
            "T-001",
            "Dark mode toggle",
            f"## Description\nUsers want a dark theme. {PLANT}\n\n"
            f"## Acceptance criteria\n{CRITERIA}",
            kind="ui",
        ),
        "plan/T-002-names.md": md_task(
            "T-002",
            "Colour names",
            "## Description\nName the theme's colours.\n\n## Acceptance criteria\n- it works\n",
            kind="logic",
        ),
    }
    repo = make_repo(tmp_path / "repo", files)
    script = {
        "tasks": {
            "T-001": [
                {
                    "actions": [
                        write("toggle.txt", "on\n"),
                        write("src/header.html", HEADER + "</header>\n"),
                    ],
                    "resolution": "Added the toggle's flag and the header.",
                },
                {
                    "actions": [
                        write(
                            "src/header.html",
                            HEADER.replace("<header>", '<header class="theme">')
                            + BUTTON
                            + "</header>\n",
                        ),
                        write("logo.bin", "\u0000\u0001PNG binary"),
                        {"run": ["echo", PLANT]},
                    ],
                    "resolution": "Added the button to the header.",
                },
            ]
        },
        "roles": {
            "T-001": {
                "designer": [{"actions": [write("prototype.svg", SVG)], "resolution": "A header."}],
                "qa": [
                    {
                        "verdict": "reject",
                        "category": "acceptance_gap",
                        "concern": "The toggle is missing from the header.",
                        "evidence": ["src/header.html"],
                        "next_step": "Add a button to the header.",
                    },
                    {"verdict": "accept", "concern": "The toggle shows; found-2.png."},
                ],
            },
            "T-002": {
                "writer": [
                    {
                        "outcome": "question",
                        "question": f"Which names should the colours have? {PLANT}",
                        "options": [f"The CSS names {PLANT}", "Names of our own"],
                    }
                ]
            },
        },
    }
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps(script))
    settings = {"pipeline": "full", "autonomy": "full"}
    summary, _ = run_plan(repo / "plan", repo, replay, settings=settings)
    assert summary.status == "waiting"  # T-001 done, T-002 asks
    # qa walked criterion 2 in the browser: its screenshot is where qa leaves it.
    folder = StateDir.for_repo(repo).artifacts(repo / "plan", "T-001")
    (folder / "found-2.png").write_bytes(png(360, 120, BLUE))
    return repo


@pytest.fixture
def drawn(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """The board over `drawer_repo`, on a free loopback port."""
    repo = drawer_repo(tmp_path)
    with serving(repo) as port:
        yield port, repo


def details(port: int, task: str) -> dict[str, Any]:
    status, found = call(port, "GET", f"/api/tasks/{task}")
    assert status == 200, found
    return dict(found)


def test_the_ledger_gives_each_attempts_checks_and_verdicts(drawn: tuple[int, Path]) -> None:
    port, _ = drawn
    found = details(port, "T-001")
    first, second = found["attempts"]
    assert (first["number"], first["status"], second["status"]) == (1, "rejected", "passed")
    assert first["ledger"]["outcome"] == "rejected" and second["ledger"]["outcome"] == "accepted"
    [verdict] = first["ledger"]["verdicts"]
    assert (verdict["lens"], verdict["verdict"]) == ("qa", "reject")
    assert verdict["concern"] == "The toggle is missing from the header."
    assert verdict["next_step"] == "Add a button to the header."
    checks = {g["name"]: g for g in first["ledger"]["gates"]}
    assert checks["command"]["ok"] and "test -f toggle.txt" in checks["command"]["detail"]
    assert first["candidate_sha"] != second["candidate_sha"]
    assert [c["tag"] for c in found["criteria"]] == ["closes", "found"]
    assert found["criteria"][0]["check"] == "test -f toggle.txt"
    assert found["prototypes"] == ["prototype.svg"]
    roles = [u["role"] for u in found["units"]]
    assert roles == [
        "writer", "explorer", "planner", "designer", "tester", "implementer", "qa",
        "implementer", "qa", "judge",
    ]  # fmt: skip
    assert all(u["seconds"] is not None and u["transcript"] for u in found["units"])


def test_the_diff_names_each_changed_file_with_its_lines(drawn: tuple[int, Path]) -> None:
    port, _ = drawn
    first, second = details(port, "T-001")["attempts"]
    status, change = call(port, "GET", f"/api/tasks/T-001/attempts/{second['id']}/diff")
    assert status == 200, change
    files = {f["path"]: f for f in change["files"]}
    assert list(files) == ["logo.bin", "src/header.html", "toggle.txt"]
    header = files["src/header.html"]
    assert (header["status"], header["added"], header["deleted"]) == ("M", 3, 1)
    assert header["text"].splitlines()[:3] == [
        "@@ -1,4 +1,6 @@", "-<header>", '+<header class="theme">'
    ]  # fmt: skip
    assert f"+  {PLANT}" in header["text"].splitlines()  # the text as it is, for the page
    assert "+" + BUTTON.rstrip("\n") in header["text"].splitlines()
    assert files["logo.bin"]["binary"] and files["logo.bin"]["text"] == ""
    assert files["logo.bin"]["note"] == "binary file: not shown"
    assert files["toggle.txt"]["text"] == "@@ -0,0 +1 @@\n+on"
    status, before = call(port, "GET", f"/api/tasks/T-001/attempts/{first['id']}/diff")
    assert status == 200 and "logo.bin" not in [f["path"] for f in before["files"]]
    assert "dark mode" not in json.dumps(before)  # the first attempt had no button
    # Only an attempt of this task, in this plan's runs:
    assert call(port, "GET", f"/api/tasks/T-002/attempts/{second['id']}/diff")[0] == 404
    assert call(port, "GET", "/api/tasks/T-001/attempts/999/diff")[0] == 404
    status, none = call(port, "GET", f"/api/tasks/T-002/attempts/{second['id'] + 1}/diff")
    assert status == 404 and "left no change" in none["error"]  # the writer's attempt


def test_a_large_change_is_cut_per_file_and_in_all_and_says_so(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    base = git(repo, "rev-parse", "HEAD").strip()
    long_line = "a line of a generated file, long enough to add up quickly\n"
    for number in range(10):  # ten files of ~170 KB each: over the per-file and total caps
        (repo / f"gen-{number}.txt").write_text(long_line * 3000)
    (repo / "huge.txt").write_text("x\n" * (diffs.FILE_LINES + 1))
    (repo / "small.txt").write_text("small\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "big")
    head = git(repo, "rev-parse", "HEAD").strip()
    attempt = Attempt(
        1, "run", "T-001", 1, "", "b", base, head, AttemptStatus.PASSED, None, "", None
    )
    change = diffs.change(repo, attempt)
    assert isinstance(change, dict)
    files = {f["path"]: f for f in change["files"]}
    assert files["gen-0.txt"]["note"] == "cut: the first 64 KB of this file's diff"
    assert len(files["gen-0.txt"]["text"].encode()) <= diffs.FILE_BYTES
    assert files["gen-0.txt"]["text"].endswith(long_line.rstrip("\n"))  # cut at a line's end
    assert (
        files["huge.txt"]["note"] == f"not shown: {diffs.FILE_LINES + 1} changed lines, over 5000"
    )
    assert files["huge.txt"]["text"] == ""
    shown = sum(len(f["text"].encode()) for f in change["files"])
    assert shown <= diffs.TOTAL_BYTES
    left = [f["path"] for f in change["files"] if f["note"].startswith("not shown: the files")]
    assert left and "small.txt" in left  # past the total: named, not shown
    gone = Attempt(
        2, "run", "T-001", 2, "", "b", base, "0" * 40, AttemptStatus.REJECTED, None, "", None
    )
    missing = diffs.change(repo, gone)
    assert isinstance(missing, diffs.Missing) and "no longer in the repository" in missing.what


def test_each_file_gets_its_own_text_through_renames_modes_and_odd_names(tmp_path: Path) -> None:
    names = {"old name.txt": "one\ntwo\nthree\nfour\n", "run.sh": "echo hi\n", "é\tx.md": "a\n"}
    repo = make_repo(tmp_path / "repo", names)
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "mv", "old name.txt", "new name.txt")
    (repo / "new name.txt").write_text("one\ntwo\nthree\nfour\nfive\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "é\tx.md").write_text("b\n")
    git(repo, "commit", "-q", "-am", "change")
    head = git(repo, "rev-parse", "HEAD").strip()
    attempt = Attempt(
        1, "run", "T-001", 1, "", "b", base, head, AttemptStatus.PASSED, None, "", None
    )
    change = diffs.change(repo, attempt)
    assert isinstance(change, dict)
    files = {f["path"]: f for f in change["files"]}
    assert list(files) == ["new name.txt", "run.sh", "é\tx.md"]
    renamed = files["new name.txt"]
    assert (renamed["status"], renamed["old_path"]) == ("R", "old name.txt")
    assert "rename from old name.txt" in renamed["header"]
    assert renamed["text"].splitlines()[-1] == "+five"
    assert files["run.sh"]["header"] == ["old mode 100644", "new mode 100755"]
    assert files["run.sh"]["text"] == ""
    assert files["é\tx.md"]["text"] == "@@ -1 +1 @@\n-a\n+b"


def test_a_transcript_is_read_only_where_the_store_says_inside_the_state_folder(
    drawn: tuple[int, Path], tmp_path: Path
) -> None:
    port, repo = drawn
    units = details(port, "T-001")["units"]
    second = [u for u in units if u["role"] == "implementer"][1]
    status, found = call(port, "GET", f"/api/tasks/T-001/units/{second['id']}/transcript")
    assert status == 200, found
    assert found["role"] == "implementer" and found["total"] == len(found["lines"])
    lines = [(line["role"], line["text"]) for line in found["lines"]]
    assert lines[0][0] == "user" and "Your task: T-001, Dark mode toggle" in lines[0][1]
    assert ("tool", "action: write · target: src/header.html") in lines
    assert ("tool", f"action: run · target: ['echo', {PLANT!r}]") in lines
    assert lines[-1] == ("assistant", "outcome: done")
    status, tail = call(port, "GET", f"/api/tasks/T-001/units/{second['id']}/transcript?tail=1")
    assert [line["text"] for line in tail["lines"]] == ["outcome: done"]
    assert tail["total"] == found["total"]
    # A unit of another task is not this task's; nor is a file outside the state folder.
    assert call(port, "GET", f"/api/tasks/T-002/units/{second['id']}/transcript")[0] == 404
    outside = tmp_path / "outside.jsonl"
    outside.write_text('{"role": "user", "content": "not the harness\'s"}\n')
    state = StateDir.for_repo(repo)
    link = state.root / "link.jsonl"
    link.symlink_to(outside)
    with sqlite3.connect(state.database) as db:
        db.execute("UPDATE units SET transcript = ? WHERE id = ?", (str(outside), second["id"]))
        db.execute("UPDATE units SET transcript = ? WHERE id = ?", (str(link), units[0]["id"]))
    for unit in (second["id"], units[0]["id"]):
        status, refused = call(port, "GET", f"/api/tasks/T-001/units/{unit}/transcript")
        assert status == 404 and "no transcript" in refused["error"], refused


def test_a_working_units_transcript_shows_its_whole_lines_as_it_grows(
    drawn: tuple[int, Path],
) -> None:
    port, repo = drawn
    unit = [u for u in details(port, "T-001")["units"] if u["role"] == "implementer"][1]
    path = f"/api/tasks/T-001/units/{unit['id']}/transcript"
    before = call(port, "GET", path)[1]
    state = StateDir.for_repo(repo)
    with sqlite3.connect(state.database) as db:  # the unit as it was while it worked
        db.execute("UPDATE units SET ended = NULL, outcome = NULL WHERE id = ?", (unit["id"],))
        [[written]] = db.execute("SELECT transcript FROM units WHERE id = ?", (unit["id"],))
    with open(written, "a") as file:
        file.write('{"role": "tool", "action": "run", "tar')  # a line half written
    status, found = call(port, "GET", path)
    assert status == 200, found
    assert found["lines"] == before["lines"] and found["total"] == before["total"]
    with open(written, "a") as file:
        file.write('get": "make"}\n')
    found = call(port, "GET", path)[1]
    assert found["total"] == before["total"] + 1
    assert found["lines"][-1] == {"role": "tool", "text": "action: run · target: make"}


def test_evidence_gives_each_found_criterion_its_screenshot(drawn: tuple[int, Path]) -> None:
    port, _ = drawn
    evidence = details(port, "T-001")["evidence"]
    assert evidence == {
        "walked": True,
        "criteria": [
            {
                "number": 2,
                "text": "[found] the toggle shows in the header",
                "picture": "found-2.png",
            }
        ],
    }
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    conn.request("GET", "/api/tasks/T-001/pictures/found-2.png", headers=READ)
    answer = conn.getresponse()
    shot = answer.read()
    conn.close()
    assert (answer.status, answer.getheader("Content-Type")) == (200, "image/png")
    assert shot == png(360, 120, BLUE)
    # T-002 has no [found] criterion and no qa yet; its question is data, not markup.
    found = details(port, "T-002")
    assert found["evidence"] == {"walked": False, "criteria": []}
    [question] = found["questions"]
    assert question["open"] and question["text"].endswith(PLANT)
    assert question["options"] == [f"The CSS names {PLANT}", "Names of our own"]
