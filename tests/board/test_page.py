"""The board's page in a real headless Chromium: the columns and cards show where each task
stands, the title counts what waits for a person, a button makes the move, a second browser
with the token sees it live, one without it sees nothing of the board but how to open it, and
task text planted with markup shows as text."""

from __future__ import annotations

from pathlib import Path

from tests.agents.pictures import needs_browser
from tests.board.pages import browser
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
