"""The task drawer in a real headless Chromium: a card opens it, each tab shows what the store
and the repository hold (the ledger's verdicts, the diff file by file, the units and a
transcript, qa's evidence, a question to answer), the tab picked stays while the board reads
again, and text planted with markup in a task, a diff, a transcript and a question stays text.

With TASKHAND_SCREENSHOTS=1 the drawer's pictures in docs/ are taken again."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from tests.agents.pictures import needs_browser
from tests.board.pages import DOCS, SHOTS, browser
from tests.board.test_app import TOKEN
from tests.board.test_details import BUTTON, PLANT, drawn

__all__ = ["browser", "drawn"]


def shot_path(tmp_path: Path, name: str) -> Path:
    """Where a picture of the drawer goes: docs/ when asked for, else the test's folder."""
    return (DOCS if os.environ.get(SHOTS) == "1" else tmp_path) / name


def tabs(page: Any) -> list[str]:
    return [str(t) for t in page.locator("#drawer-tabs button").all_inner_texts()]


def pick(page: Any, name: str) -> Any:
    page.locator(f"#drawer-tabs button[data-tab={name}]").click()
    page.locator(f"#drawer-tabs button[data-tab={name}][aria-selected=true]").wait_for()
    return page.locator("#drawer-tab")


def assert_nothing_ran(page: Any) -> None:
    """The planted markup made no element and ran nothing."""
    assert page.evaluate("window.__pwned") is None
    assert "pwned" not in page.title()
    assert page.locator("#drawer script, #drawer img[src=x]").count() == 0


@needs_browser
def test_the_drawer_shows_the_ledger_diff_units_and_evidence_as_text(
    drawn: tuple[int, Path], browser: Any, tmp_path: Path
) -> None:
    port, _ = drawn
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"http://127.0.0.1:{port}/#token={TOKEN}")
    page.locator("[data-status=done] [data-task=T-001] .title").click()
    drawer = page.locator("#drawer")
    drawer.wait_for(state="visible")
    page.locator("#drawer-tabs button[data-tab=Evidence]").wait_for()
    # Every tab with something to show; T-001 asked no question.
    assert tabs(page) == ["Task", "Plan", "Prototype", "Attempts", "Diff", "Units", "Evidence"]
    shown = page.locator("#drawer-tab")
    assert f"Users want a dark theme. {PLANT}" in shown.locator("pre.description").inner_text()
    assert shown.locator(".criterion .tag.found").text_content() == "found"

    attempts = pick(page, "Attempts")
    first, second = attempts.locator("article.attempt").all()
    assert "attempt 1 · rejected" in first.locator("h3").inner_text()
    assert first.locator(".verdict.rejected dd.concern").inner_text() == (
        "The toggle is missing from the header."
    )
    assert first.locator(".verdict dd.next-step").inner_text() == "Add a button to the header."
    assert "command" in first.locator("table").inner_text()
    assert first.locator("table .pass").count() == 3  # the command, whitespace and scope
    assert "attempt 2 · accepted" in second.locator("h3").inner_text()
    page.screenshot(path=str(shot_path(tmp_path, "board-attempts.png")))

    diff = pick(page, "Diff")
    header = diff.locator("section.file[data-path='src/header.html']")
    header.wait_for()
    added = header.locator("pre.diff span.add").all_inner_texts()
    assert "+" + BUTTON.rstrip("\n") in added
    assert f"+  {PLANT}" in added  # the planted line, as text
    assert (
        "binary file: not shown" in diff.locator("section.file[data-path='logo.bin']").inner_text()
    )
    assert diff.locator("section.file .path").all_inner_texts() == [
        "logo.bin", "src/header.html", "toggle.txt"
    ]  # fmt: skip
    page.screenshot(path=str(shot_path(tmp_path, "board-drawer.png")))
    diff.locator(".attempt-picker button").first.click()  # the first attempt's change
    diff.locator(".attempt-picker button[aria-pressed=true]").first.wait_for()
    page.wait_for_function(
        "() => !document.querySelector(\"#drawer-tab section.file[data-path='logo.bin']\")"
    )
    assert diff.locator("section.file .path").all_inner_texts() == ["src/header.html", "toggle.txt"]

    units = pick(page, "Units")
    assert "implementer" in units.locator("table").inner_text()
    second_implementer = units.locator("tr", has_text="implementer").nth(1)
    second_implementer.locator("button.transcript").click()
    transcript = units.locator("section.transcript")
    transcript.wait_for()
    assert "implementer" in transcript.locator("h3").inner_text()
    lines = transcript.locator("li.line")
    assert "action: write · target: src/header.html" in lines.all_inner_texts()[1]
    assert PLANT in transcript.inner_text()  # the planted run line, as text

    evidence = pick(page, "Evidence")
    figure = evidence.locator("figure.evidence[data-criterion='2']")
    assert "[found] the toggle shows in the header" in figure.inner_text()
    page.wait_for_function(
        "() => document.querySelector('#drawer-tab figure.evidence img')?.naturalWidth === 360"
    )
    # The board reads again (as after each event): the tab stays, its content is not redrawn.
    page.evaluate("window.__kept = document.querySelector('#drawer-tab figure')")
    with page.expect_response(lambda r: r.url.endswith("/api/tasks/T-001")):
        page.evaluate("document.dispatchEvent(new CustomEvent('board:changed'))")
    page.wait_for_timeout(200)
    assert page.locator("#drawer-tabs [aria-selected=true]").inner_text() == "Evidence"
    assert page.evaluate("window.__kept === document.querySelector('#drawer-tab figure')")
    assert_nothing_ran(page)
    assert errors == []


@needs_browser
def test_a_question_is_answered_in_the_drawer_and_its_text_stays_text(
    drawn: tuple[int, Path], browser: Any
) -> None:
    port, _ = drawn
    page = browser.new_page(viewport={"width": 1440, "height": 900})
    page.goto(f"http://127.0.0.1:{port}/#token={TOKEN}")
    page.locator("[data-status=needs-input] [data-task=T-002] .title").click()
    page.locator("#drawer-tabs button[data-tab=Questions]").wait_for()
    assert tabs(page) == ["Task", "Questions", "Units"]
    # It waits for an answer: the drawer opens where the person acts.
    assert page.locator("#drawer-tabs [aria-selected=true]").inner_text() == "Questions"
    questions = page.locator("#drawer-tab")
    question = questions.locator("section.question[data-question='1']")
    assert (
        question.locator("p.asks").inner_text() == f"Which names should the colours have? {PLANT}"
    )
    options = question.locator("button.option").all_inner_texts()
    assert options == [f"(a) The CSS names {PLANT} — recommended", "(b) Names of our own"]
    question.locator("button.option[data-option=b]").click()
    # The answer is the `answer` move: the question shows answered, with the option chosen.
    page.locator("#drawer-tab section.question h3", has_text="answered").wait_for(timeout=5000)
    assert "(b) Names of our own ✓ chosen" in questions.inner_text()
    assert page.locator("#notice").is_hidden()
    assert_nothing_ran(page)
