"""The board's page in a real headless Chromium: the columns and cards show where each task
stands, the title counts what waits for a person, a button makes the move, a second browser
with the token sees it live, one without it sees nothing of the board but how to open it, and
task text planted with markup shows as text."""

from __future__ import annotations

from pathlib import Path

from taskhand.run import moves
from tests.agents.pictures import needs_browser
from tests.board.pages import RECORD_NOTIFICATIONS, browser
from tests.board.test_app import TOKEN, served

__all__ = ["browser", "served"]


@needs_browser
def test_a_person_approves_on_the_board_and_another_browser_sees_it(
    served: tuple[int, Path], browser: object, tmp_path: Path
) -> None:
    port, repo = served
    task = repo / "plan" / "T-001-toggle.md"
    planted = "<b>Dark</b> <script>window.__pwned = 1</script><img src=x onerror=window.__pwned=2>"
    task.write_text(task.read_text().replace("title: Dark mode toggle", f"title: {planted}"))
    address = f"http://127.0.0.1:{port}/"
    person = browser.new_page(viewport={"width": 1440, "height": 900})  # type: ignore[attr-defined]
    watcher = browser.new_context().new_page()  # type: ignore[attr-defined]
    person.goto(f"{address}#token={TOKEN}")
    watcher.goto(f"{address}#token={TOKEN}")
    card = person.locator("[data-status=planned] [data-task=T-001]")
    card.wait_for()
    assert card.locator(".title").inner_text() == planted  # text, not markup
    assert card.locator("b, script, img").count() == 0
    assert person.evaluate("window.__pwned") is None  # nothing of it ran
    assert "waits for approval of the plan" in card.inner_text()
    assert person.title() == "(1) taskhand board"
    assert "#token" not in person.url  # the token leaves the address bar
    card.locator(".title").click()  # the drawer: what the lifecycle wrote, the units
    drawer = person.locator("#drawer")
    drawer.wait_for(state="visible")
    assert drawer.locator("pre.plan").inner_text() == "(replay) the planner's work on T-001"
    drawer.locator("button[data-tab=Units]").click()  # the drawer opens where the task waits
    assert "planner" in drawer.locator("table").last.inner_text()
    person.screenshot(path=str(tmp_path / "board.png"))
    person.locator("#close").click()
    watcher.locator("[data-status=planned] [data-task=T-001]").wait_for()
    card.locator("button[data-move=approve]").click()
    person.locator("[data-status=ready] [data-task=T-001]").wait_for(timeout=5000)
    # The second browser, with no click, sees the move through the event stream.
    watcher.locator("[data-status=ready] [data-task=T-001]").wait_for(timeout=3000)
    assert watcher.title() == "taskhand board"
    # A page opened without the token shows nothing of the board, and says how to open it.
    stranger = browser.new_context().new_page()  # type: ignore[attr-defined]
    stranger.goto(address)
    trouble = stranger.locator("#trouble")
    trouble.wait_for(state="visible")
    assert "opened without the board's key" in trouble.inner_text()
    assert "Open the address the board printed in the terminal" in trouble.inner_text()
    stranger.screenshot(path=str(tmp_path / "no-token.png"))
    assert stranger.locator(".card").count() == 0
    assert "Dark" not in stranger.content()


@needs_browser
def test_a_new_draft_is_counted_and_announced_as_waiting_for_a_person(
    served: tuple[int, Path], browser: object
) -> None:
    port, repo = served
    context = browser.new_context()  # type: ignore[attr-defined]
    context.add_init_script(RECORD_NOTIFICATIONS)
    page = context.new_page()
    page.goto(f"http://127.0.0.1:{port}/#token={TOKEN}")
    page.locator("[data-status=planned] [data-task=T-001]").wait_for()
    assert page.title() == "(1) taskhand board"
    drafted = moves.new(repo / "plan", "Dark mode", "A toggle.", repo=repo).task
    card = page.locator(f"[data-status=draft] [data-task={drafted}]")
    card.wait_for(timeout=5000)
    assert "waiting" in (card.get_attribute("class") or "")
    page.wait_for_function("document.title === '(2) taskhand board'", timeout=5000)
    page.wait_for_function(f"window.shown.some(n => n.title === '{drafted} waits for you')")
    shown = page.evaluate("window.shown")
    assert {
        "title": f"{drafted} waits for you",
        "body": "Dark mode: a person to submit the draft",
    } in shown
