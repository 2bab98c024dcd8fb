"""`taskhand author` at the command line: a plan written, questions answered from a file,
the round cap, and every bad input refused before any agent works, leaving no folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import Result

from taskhand.plan import validate
from taskhand.run.author_inputs import MAX_DOCUMENT_BYTES
from tests.conftest import RunCli
from tests.plans import tt_plan
from tests.run.authoring import BAD_PLAN, files, fixed_plan, replay_script

QUESTION = {
    "outcome": "question",
    "question": "Where does the count go?",
    "options": ["Standard output (recommended: it pipes)", "A file beside the input"],
}


def author(
    run_cli: RunCli, tmp_path: Path, *more: str | Path, script: Path | None = None
) -> Result:
    """`taskhand author` on the files `files(tmp_path)` made, with a replay script."""
    script = script or replay_script(tmp_path, {"plan": fixed_plan()})
    requirements, repo = tmp_path / "docs" / "wordcount.md", tmp_path / "repo"
    out = ("--out", tmp_path / "out", "--script", script, "--repo", repo, "--sandbox", "none")
    return run_cli("author", requirements, *out, *more)


def leftovers(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in tmp_path.iterdir() if p.name.startswith((".out", "out")))


def test_author_writes_a_tasktrack_plan_and_says_so(tmp_path: Path, run_cli: RunCli) -> None:
    files(tmp_path)
    result = author(
        run_cli, tmp_path, "--dialect", "tasktrack", "--spec", tmp_path / "TaskTrack-v1.md"
    )
    assert result.exit_code == 0, result.output
    assert "wrote" in result.stdout and "4 tasks in 2 phases" in result.stdout
    assert "round 1: the plan validates" in result.stderr
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    tasks = [f"WCNT-{n}.md" for n in range(1, 5)]
    assert names == ["TaskTrack-v1.md", *tasks, "WCNT-TaskTrack.md"]
    assert validate.validate(tmp_path / "out").ok(strict=True)


def test_without_spec_the_publication_of_a_plan_in_the_repository_is_copied(
    tmp_path: Path, run_cli: RunCli
) -> None:
    repo, _, _ = files(tmp_path)
    old = repo / "plans" / "old"
    old.mkdir(parents=True)
    for name, text in tt_plan([[("OLD-1", "DONE")]], code="OLD").items():
        (old / name).write_text(str(text))
    result = author(run_cli, tmp_path, "--dialect", "tasktrack")
    assert result.exit_code == 0, result.output
    copied = (tmp_path / "out" / "TaskTrack-v1.md").read_bytes()
    assert copied == (old / "TaskTrack-v1.md").read_bytes()
    assert validate.validate(tmp_path / "out").ok(strict=True)


def test_json_reports_the_warnings_that_remain(tmp_path: Path, run_cli: RunCli) -> None:
    files(tmp_path)
    gap = fixed_plan()
    gap["phases"][1]["tasks"][1]["id"] = 5  # numbered 1, 2, 3, 5: reported, not sent back
    spec = tmp_path / "TaskTrack-v1.md"
    script = replay_script(tmp_path, {"plan": gap})
    result = author(
        run_cli, tmp_path, "--dialect", "tasktrack", "--spec", spec, "--json", script=script
    )
    assert result.exit_code == 0, result.output
    done = json.loads(result.stdout)
    assert (done["code"], done["tasks"], done["phases"], done["rounds"]) == ("WCNT", 4, 2, 1)
    assert [w["rule"] for w in done["warnings"]] == ["counters"]
    assert "WCNT-4" in done["warnings"][0]["message"]


def test_a_needless_chain_goes_back_to_the_author(tmp_path: Path, run_cli: RunCli) -> None:
    files(tmp_path)
    chained = fixed_plan()
    listed = chained["phases"][0]["tasks"] + chained["phases"][1]["tasks"][:1]
    chain = [{**t, "dependencies": [t["id"] - 1] if t["id"] > 1 else []} for t in listed]
    chained["phases"] = [{"title": "All", "tasks": chain}]
    script = replay_script(tmp_path, {"plan": chained})
    two = author(run_cli, tmp_path, "--dialect", "markdown", "--rounds", "2", script=script)
    assert two.exit_code == 0, two.output
    assert "round 1: " in two.stderr and "go back to the author" in two.stderr
    assert "phase 1's 3 tasks form one dependency chain" in two.stderr
    # At the cap a plan with warnings alone is written, and its warnings are reported.
    assert "round 2: the plan validates with warnings" in two.stderr
    assert "one dependency chain" in two.stdout and "wrote" in two.stdout
    assert validate.validate(tmp_path / "out").ok()


def test_ask_takes_the_answers_from_a_file(tmp_path: Path, run_cli: RunCli) -> None:
    files(tmp_path)
    script = replay_script(tmp_path, QUESTION, {"plan": fixed_plan()})
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"Q1": {"choice": "b", "note": "logs are kept"}}))
    result = author(
        run_cli,
        tmp_path,
        "--dialect",
        "markdown",
        "--ask",
        "--answers",
        answers,
        "--json",
        script=script,
    )
    assert result.exit_code == 0, result.output
    done = json.loads(result.stdout)
    assert done["interview"] == [
        "Q1: Where does the count go? -> (b) A file beside the input logs are kept"
    ]
    assert done["rounds"] == 1 and done["tasks"] == 4 and done["warnings"] == []


def test_ask_without_a_terminal_or_answers_says_how_to_answer(
    tmp_path: Path, run_cli: RunCli
) -> None:
    files(tmp_path)
    script = replay_script(tmp_path, QUESTION, {"plan": fixed_plan()})
    result = author(run_cli, tmp_path, "--dialect", "markdown", "--ask", script=script)
    assert result.exit_code == 1
    [line] = result.stderr.strip().splitlines()[-1:]
    assert "Q1: Where does the count go?" in line and "(a) Standard output" in line
    assert "--answers FILE" in line and '{"Q1": "a"' in line
    assert leftovers(tmp_path) == []


def test_an_answer_that_is_not_an_option_is_refused(tmp_path: Path, run_cli: RunCli) -> None:
    files(tmp_path)
    script = replay_script(tmp_path, QUESTION, {"plan": fixed_plan()})
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"Q1": "z"}))
    result = author(
        run_cli, tmp_path, "--dialect", "markdown", "--ask", "--answers", answers, script=script
    )
    assert result.exit_code == 1
    assert "answer Q1 is 'z', not one of a, b" in result.stderr
    assert leftovers(tmp_path) == []


def test_a_question_without_ask_costs_a_round_and_the_author_decides(
    tmp_path: Path, run_cli: RunCli
) -> None:
    files(tmp_path)
    script = replay_script(tmp_path, QUESTION, {"plan": fixed_plan()})
    result = author(run_cli, tmp_path, "--dialect", "markdown", script=script)
    assert result.exit_code == 0, result.output
    assert "questions are not taken now" in result.stderr
    assert "after 2 round(s)" in result.stdout


def test_a_plan_that_never_validates_stops_at_the_cap_and_leaves_no_folder(
    tmp_path: Path, run_cli: RunCli
) -> None:
    files(tmp_path)
    script = replay_script(tmp_path, {"plan": BAD_PLAN})
    result = author(run_cli, tmp_path, "--dialect", "markdown", "--rounds", "2", script=script)
    assert result.exit_code == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("taskhand: error: the author's plan had errors after 2 round(s)")
    assert "T-002 (phase 1) depends on T-003 (phase 2)" in last and "dependency cycle" in last
    assert "--rounds" in last
    assert result.stderr.count("go back to the author") == 1
    assert "round 2: 2 problem(s) remain" in result.stderr
    assert leftovers(tmp_path) == []


def bad(tmp_path: Path, kind: str) -> Path:
    path = tmp_path / f"{kind}.md"
    if kind == "empty":
        path.write_text("  \n")
    elif kind == "binary":
        path.write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0")
    elif kind == "utf16":
        path.write_bytes("# Requirements\n".encode("utf-16"))
    elif kind == "a,b":
        path.write_text("# Requirements\n")
    elif kind == "huge":
        path.write_text("word " * (MAX_DOCUMENT_BYTES // 5 + 1))
    return path


@pytest.mark.parametrize(
    ("kind", "said"),
    [
        ("missing", "does not exist (fix: name a requirement file)"),
        ("empty", "is empty (fix: write the requirements into it)"),
        ("binary", "is binary, not text (fix: export it as Markdown or plain text)"),
        ("utf16", "is UTF-16 text (fix: save it as UTF-8 (Markdown or plain text))"),
        ("huge", "over the 256 KiB a requirement document may have (fix: split it"),
        ("a,b", "its path holds a comma, which TaskTrack's comma-separated Resources cannot"),
    ],
)
def test_a_bad_requirement_file_is_named_before_any_agent_works(
    tmp_path: Path, run_cli: RunCli, kind: str, said: str
) -> None:
    repo, good, spec = files(tmp_path)
    # A script that cannot be read: had any agent been made, that would be the error.
    result = run_cli(
        "author",
        good,
        bad(tmp_path, kind),
        "--out",
        tmp_path / "out",
        "--dialect",
        "tasktrack",
        "--spec",
        spec,
        "--script",
        tmp_path / "no-script.json",
        "--repo",
        repo,
    )
    assert result.exit_code == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"taskhand: error: {tmp_path / f'{kind}.md'}: ") and said in line
    assert leftovers(tmp_path) == []


def test_a_folder_that_holds_files_and_a_missing_spec_are_refused_first(
    tmp_path: Path, run_cli: RunCli
) -> None:
    repo, requirements, _ = files(tmp_path)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine\n")
    common = ("--script", tmp_path / "no-script.json", "--repo", repo)
    taken = run_cli(
        "author", requirements, "--out", tmp_path / "out", "--dialect", "markdown", *common
    )
    assert taken.exit_code == 1 and "exists and is not empty" in taken.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["notes.txt"]
    no_spec = run_cli(
        "author", requirements, "--out", tmp_path / "new", "--dialect", "tasktrack", *common
    )
    assert no_spec.exit_code == 1 and "--spec TaskTrack-<REVISION>.md" in no_spec.stderr
    assert not (tmp_path / "new").exists()


def test_ask_reads_the_answer_from_the_terminal(tmp_path: Path) -> None:
    repo, requirements, _ = files(tmp_path)
    script = replay_script(tmp_path, QUESTION, {"plan": fixed_plan()})
    main, follower = os.openpty()  # a real terminal for the command's stdin
    try:
        os.write(main, b"b\nfor the logs\n")  # the letter, then the note
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "taskhand",
                "author",
                requirements,
                "--out",
                tmp_path / "out",
                "--dialect",
                "markdown",
                "--script",
                script,
                "--repo",
                repo,
                "--sandbox",
                "none",
                "--ask",
                "--json",
            ],
            stdin=follower,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        os.close(main)
        os.close(follower)
    assert done.returncode == 0, done.stderr
    assert "Q1: Where does the count go?" in done.stderr and "(b) A file beside" in done.stderr
    assert json.loads(done.stdout)["interview"] == [
        "Q1: Where does the count go? -> (b) A file beside the input for the logs"
    ]


def test_code_is_the_persons_choice_over_the_authors(tmp_path: Path, run_cli: RunCli) -> None:
    files(tmp_path)
    spec = tmp_path / "TaskTrack-v1.md"
    result = author(run_cli, tmp_path, "--dialect", "tasktrack", "--spec", spec, "--code", "WORDS")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "out" / "WORDS-TaskTrack.md").is_file()
    assert validate.validate(tmp_path / "out").ok(strict=True)
    wrong = run_cli(
        "author",
        tmp_path / "docs" / "wordcount.md",
        "--out",
        tmp_path / "o2",
        "--dialect",
        "tasktrack",
        "--spec",
        spec,
        "--code",
        "wc1",
    )
    assert wrong.exit_code == 1 and "plan code 'wc1' must be 3 to 5 letters" in wrong.stderr


def test_a_criterion_nobody_could_check_goes_back_to_the_author(
    tmp_path: Path, run_cli: RunCli
) -> None:
    files(tmp_path)
    vague = fixed_plan()
    vague["phases"][0]["tasks"][1]["criteria"] = [{"text": "The command line works well"}]
    script = replay_script(tmp_path, {"plan": vague}, {"plan": fixed_plan()})
    result = author(run_cli, tmp_path, "--dialect", "markdown", script=script)
    assert result.exit_code == 0, result.output
    assert "T-002-command-line.md:" in result.stderr
    assert (
        "warning [uncheckable-criterion]" in result.stderr and "after 2 round(s)" in result.stdout
    )


def test_a_task_without_criteria_goes_back_as_a_warning_and_is_written_at_the_cap(
    tmp_path: Path, run_cli: RunCli
) -> None:
    files(tmp_path)
    plan = fixed_plan()
    plan["phases"][0]["tasks"][0]["criteria"] = []
    script = replay_script(tmp_path, {"plan": plan})
    result = author(run_cli, tmp_path, "--dialect", "markdown", "--rounds", "2", script=script)
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines()[:3] == [
        "round 1: 1 problem(s) go back to the author",
        "  T-001-count-words.md:10: warning [criteria-missing]: T-001 has no acceptance "
        "criteria; a reviewer has nothing concrete to check (fix: add a bullet list of "
        "checkable outcomes)",
        "round 2: the plan validates with warnings",
    ]
    assert "T-001 has no acceptance criteria" in result.stdout
    assert (tmp_path / "out" / "T-001-count-words.md").is_file()


def test_the_datas_and_the_files_problems_of_a_round_come_together(
    tmp_path: Path, run_cli: RunCli
) -> None:
    files(tmp_path)
    plan = json.loads(json.dumps(BAD_PLAN))
    plan["phases"][0]["tasks"][0]["dependencies"] = ["x"]
    script = replay_script(tmp_path, {"plan": plan})
    result = author(run_cli, tmp_path, "--dialect", "markdown", "--rounds", "1", script=script)
    assert result.exit_code == 1
    assert result.stderr.splitlines()[:4] == [
        "round 1: 3 problem(s) remain",
        "  phase 1, task 1 (id 1): dependency 'x' is not a task number",
        "  T-002-command-line.md:4: error [cross-phase-dependency]: T-002 (phase 1) depends on "
        "T-003 (phase 2), which can only run after it (fix: move T-003 into phase 1 or "
        "earlier, or drop the dependency)",
        "  T-003-readme.md:5: error [cycle]: dependency cycle: T-003 -> T-004 -> T-003 (fix: "
        "remove one of these dependencies so the tasks can be ordered)",
    ]
    assert leftovers(tmp_path) == []
