"""The progress channel's file: whole lines only, each conclusion once, the last lines read."""

from __future__ import annotations

from pathlib import Path

from taskhand.state import progress
from taskhand.state.progress import Note, Outcome


def note(n: int, task_id: str = "", text: str = "did it") -> Note:
    return Note(f"run-1/{n}", task_id or f"T-{n:03}", Outcome.DONE, f"Task {n}", text)


def test_append_writes_each_conclusion_once_in_order(tmp_path: Path) -> None:
    channel = tmp_path / "progress" / "plan.log"  # the folder is made
    assert progress.append(channel, [note(1), note(2)]) == [note(1), note(2)]
    assert progress.append(channel, [note(1), note(2), note(3)]) == [note(3)]
    assert progress.append(channel, [note(3), note(3)]) == []
    lines = channel.read_text().splitlines()
    assert [line.split("\t")[:2] for line in lines] == [
        ["run-1/1", "T-001"],
        ["run-1/2", "T-002"],
        ["run-1/3", "T-003"],
    ]
    assert progress.recent(channel, 30) == [note(1), note(2), note(3)]
    assert progress.keys(channel) == {"run-1/1", "run-1/2", "run-1/3"}


def test_a_line_is_one_line_of_five_fields_cut_to_size() -> None:
    text = "Wrote\ta.txt\n\nand  b.txt " + "x" * 500
    line = Note("run-1/1", "T-001", Outcome.WAITING, "A\ttitle\nover lines", text).line()
    assert "\n" not in line and line.count("\t") == 4
    parsed = Note.parse(line)
    assert parsed is not None
    assert parsed.title == "A title over lines"
    assert parsed.resolution.startswith("Wrote a.txt and b.txt xxx")
    assert len(parsed.resolution) == progress.RESOLUTION_CHARS + len("...")
    assert Note.parse("half\ta line") is None
    assert Note.parse("k\tT-1\tlost\tt\tr") is None  # an outcome this version does not know


def test_a_torn_last_line_is_never_read_and_is_cut_before_the_next_append(
    tmp_path: Path,
) -> None:
    channel = tmp_path / "plan.log"
    progress.append(channel, [note(1)])
    whole = channel.read_bytes()
    torn = note(2, text="Torn in the middle").line().encode()[:-8]
    channel.write_bytes(whole + torn)  # what a kill in the middle of a write leaves
    assert progress.recent(channel, 30) == [note(1)]
    assert progress.keys(channel) == {"run-1/1"}
    assert progress.append(channel, [note(1), note(2, text="Torn in the middle")]) == [
        note(2, text="Torn in the middle")
    ]
    text = channel.read_text()
    assert text.endswith("\n") and text.count("run-1/2") == 1
    assert progress.recent(channel, 30) == [note(1), note(2, text="Torn in the middle")]


def test_recent_reads_the_last_lines_without_the_tasks_own(tmp_path: Path) -> None:
    channel = tmp_path / "plan.log"
    notes = [note(n, text="y" * 150) for n in range(1, 600)]
    progress.append(channel, notes)
    assert channel.stat().st_size > progress.WINDOW_BYTES  # more than the first tail read
    assert progress.recent(channel, 30) == notes[-30:]
    assert progress.recent(channel, 30, leave_out="T-599") == notes[-31:-1]
    assert progress.recent(channel, 500) == notes[-500:]
    assert progress.recent(channel, 0) == []
    assert progress.recent(tmp_path / "none.log", 30) == []


def test_a_tasks_newer_line_replaces_its_older_one(tmp_path: Path) -> None:
    """A task that waited and then was done reads as done, where it ended last."""
    channel = tmp_path / "plan.log"
    waited = Note("run-1/1", "T-001", Outcome.WAITING, "Task 1", "")
    done = Note("run-2/7", "T-001", Outcome.DONE, "Task 1", "Used a tab.")
    progress.append(channel, [waited, note(2), done, note(3)])
    assert progress.recent(channel, 30) == [note(2), done, note(3)]
    assert progress.recent(channel, 2) == [done, note(3)]
    assert progress.recent(channel, 30, leave_out="T-001") == [note(2), note(3)]
