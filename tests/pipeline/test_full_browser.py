"""The full pipeline in a real headless browser: the runner starts the project's app for the
designer and for qa, the designer's prototype is a screenshot of the running app, and qa's walk
of each [found] criterion leaves a screenshot that shows the page."""

from __future__ import annotations

import json
from pathlib import Path

from taskhand.config import AppConfig
from taskhand.state.paths import StateDir
from taskhand.state.store import Store
from tests.agents.pictures import APP_PAGE, SERVE, assert_shows_the_app, needs_browser
from tests.plans import md_task
from tests.runs import make_repo, run_plan, write

FOUND = (
    "- `$ test -f search.txt` passes\n"
    "- [found] the page shows how many bookmarks are saved\n"
    "- [found] a search shows its results\n"
)


@needs_browser
def test_qa_leaves_one_screenshot_per_found_criterion(tmp_path: Path) -> None:
    body = f"## Description\nA search box.\n\n## Acceptance criteria\n{FOUND}"
    repo = make_repo(
        tmp_path / "repo",
        {
            "index.html": APP_PAGE,
            "plan/overview.md": "# Bookmarks\n\n## Goal\nFind bookmarks.\n",
            "plan/T-001-search.md": md_task("T-001", "Search box", body, kind="ui"),
        },
    )
    roles = {
        "designer": [{"actions": [{"screenshot": "prototype"}], "resolution": "The page."}],
        "qa": [
            {
                "actions": [{"screenshot": "found-2"}, {"screenshot": "found-3"}],
                "verdict": "accept",
                "concern": "Both behaviours show.",
                "evidence": ["found-2.png", "found-3.png"],
            }
        ],
    }
    tasks = {"T-001": [{"actions": [write("search.txt", "on\n")], "resolution": "Added it."}]}
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps({"tasks": tasks, "roles": {"T-001": roles}}))
    settings = {"pipeline": "full", "autonomy": "full", "app": AppConfig(start=SERVE)}
    summary, record = run_plan(repo / "plan", repo, replay, settings=settings)
    assert summary.status == "completed", record.steps()
    artifacts = StateDir.for_repo(repo).artifacts(repo / "plan", "T-001")
    shots = sorted(p.name for p in artifacts.glob("*.png"))
    assert shots == ["found-2.png", "found-3.png", "prototype.png"]
    for name in shots:
        assert_shows_the_app(artifacts / name)
    with Store.open(StateDir.for_repo(repo).database) as store:
        roles_run = [str(u.role) for u in store.units(summary.run_id, "T-001")]
    assert roles_run.count("designer") == 1 and roles_run.count("qa") == 1


def test_an_app_that_never_starts_parks_the_task_with_the_fix(tmp_path: Path) -> None:
    body = "## Description\nA search box.\n\n## Acceptance criteria\n- [found] it shows\n"
    repo = make_repo(
        tmp_path / "repo",
        {
            "plan/overview.md": "# Bookmarks\n\n## Goal\nFind bookmarks.\n",
            "plan/T-001-search.md": md_task("T-001", "Search box", body, kind="ui"),
        },
    )
    replay = tmp_path / "replay.json"
    replay.write_text(json.dumps({"tasks": {"T-001": [{"resolution": "x"}]}}))
    app = AppConfig(start="echo broken >&2; exit 3", ready_seconds=5)
    settings = {"pipeline": "full", "autonomy": "full", "app": app}
    summary, _ = run_plan(repo / "plan", repo, replay, settings=settings)
    assert summary.status == "waiting"  # parked, for a person
    with Store.open(StateDir.for_repo(repo).database) as store:
        life = store.life(str((repo / "plan").resolve()), "T-001")
        roles_run = [str(u.role) for u in store.units(summary.run_id, "T-001")]
    assert life is not None and life.status == "parked" and life.resume == "prototype"
    assert "the app did not start for the designer" in (life.reason or "")
    assert "exit code 3" in (life.reason or "") and "broken" in (life.reason or "")
    assert "designer" not in roles_run  # no unit was paid for without its app
