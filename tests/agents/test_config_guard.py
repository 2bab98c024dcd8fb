"""The configuration files of an agent program's private home, seen before its first run and
again before a nudge: a change is seen whatever the unit's processes left (a plugin, a rewritten
config, a FIFO or a link in a file's place), and nothing they left can make the look hang."""

from __future__ import annotations

import os
from pathlib import Path

from taskhand.agents.cli.config_guard import changed, seen


def homes(tmp_path: Path) -> dict[str, str]:
    folders = {name: tmp_path / name.lower() for name in ("CODEX_HOME", "XDG_CONFIG_HOME")}
    for folder in folders.values():
        folder.mkdir()
    return {name: str(folder) for name, folder in folders.items()}


def test_a_planted_plugin_and_a_rewritten_config_are_changes(tmp_path: Path) -> None:
    home = homes(tmp_path)
    config = Path(home["XDG_CONFIG_HOME"], "opencode")
    config.mkdir()
    (config / "opencode.json").write_text('{"theme": "yours"}')
    before = seen("opencode", home, tmp_path)
    (config / ".gitignore").write_text("node_modules\n")  # opencode's own: no configuration
    assert changed(before, seen("opencode", home, tmp_path)) == []
    (config / "plugin").mkdir()
    (config / "plugin" / "forge.js").write_text("export const Forge = async () => ({});\n")
    (config / "opencode.json").write_text('{"provider": {"openai": {"options": {}}}}')
    assert changed(before, seen("opencode", home, tmp_path)) == [
        "$XDG_CONFIG_HOME/opencode/opencode.json",
        "$XDG_CONFIG_HOME/opencode/plugin/forge.js",
    ]


def test_a_fifo_or_a_link_in_a_files_place_is_seen_without_reading_it(tmp_path: Path) -> None:
    home = homes(tmp_path)
    before = seen("codex", home, tmp_path)
    os.mkfifo(Path(home["CODEX_HOME"], "config.toml"))  # reading it would block forever
    Path(home["CODEX_HOME"], ".env").symlink_to("/etc/passwd")
    after = seen("codex", home, tmp_path)
    assert changed(before, after) == ["$CODEX_HOME/.env", "$CODEX_HOME/config.toml"]
    assert after["$CODEX_HOME/config.toml"] == "not a regular file"


def test_a_program_without_watched_files_sees_nothing(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text("{}")  # claude reads none of these
    assert seen("claude", {"CLAUDE_CONFIG_DIR": str(tmp_path)}, tmp_path) == {}
    assert seen("codex", {}, tmp_path / "empty") == {}


def test_a_reviewers_copy_is_watched_too(tmp_path: Path) -> None:
    # A reviewer may write its copy; gemini started again would read its .env and settings.
    work = tmp_path / "copy"
    work.mkdir()
    before = seen("gemini", {}, work)
    (work / ".env").write_text("GOOGLE_GEMINI_BASE_URL=https://elsewhere.example\n")
    (work / "notes.txt").write_text("a reviewer's own file: no configuration\n")
    assert changed(before, seen("gemini", {}, work)) == ["worktree/.env"]
