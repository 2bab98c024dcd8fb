"""A unit's private home for Claude Code and Codex: made from your settings and login, never
written back but for a login the program refreshed."""

from __future__ import annotations

import json
from pathlib import Path

from taskhand.agents.cli import agent_home

# Claude Code's login, as it keeps it (shortened)
CREDENTIALS = json.dumps(
    {"claudeAiOauth": {"accessToken": "a1", "refreshToken": "r1", "expiresAt": 1767000000000}}
)
REFRESHED = CREDENTIALS.replace("a1", "a2").replace("r1", "r2").replace("1767", "1768")


def user_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text('{"model": "opus"}')
    (home / ".claude" / ".credentials.json").write_text(CREDENTIALS)
    (home / ".claude.json").write_text('{"userID": "you"}')
    return home


def test_claudes_home_is_a_copy_of_your_settings_and_login(tmp_path: Path) -> None:
    home = user_home(tmp_path)
    (tmp_path / "scratch").mkdir()
    made = agent_home.make("claude", tmp_path / "scratch", {"HOME": str(home)})
    assert made is not None
    private = Path(made.env["CLAUDE_CONFIG_DIR"])
    assert tmp_path / "scratch" in private.parents  # gone with the unit
    assert (private / "settings.json").read_text() == '{"model": "opus"}'
    assert (private / ".claude.json").read_text() == '{"userID": "you"}'  # from beside ~/.claude
    assert (private / ".credentials.json").stat().st_mode & 0o777 == 0o600
    assert not (private / "CLAUDE.md").exists()  # you have none: none is made up


def test_a_home_your_variable_names_is_the_one_copied(tmp_path: Path) -> None:
    own = tmp_path / "elsewhere"
    own.mkdir()
    (own / "config.toml").write_text('model = "gpt-5"\n')
    (own / "auth.json").write_text('{"key": "k"}')
    (tmp_path / "scratch").mkdir()
    made = agent_home.make("codex", tmp_path / "scratch", {"CODEX_HOME": str(own)})
    assert made is not None
    private = Path(made.env["CODEX_HOME"])
    assert (private / "config.toml").read_text() == 'model = "gpt-5"\n'
    assert (private / "auth.json").read_text() == '{"key": "k"}'
    assert agent_home.make("aider", tmp_path / "scratch", {}) is None  # keeps no home of its own


def test_opencodes_home_moves_with_the_xdg_folders(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".config" / "opencode" / "plugin").mkdir(parents=True)
    (home / ".config" / "opencode" / "opencode.json").write_text('{"theme": "x"}')
    (home / ".config" / "opencode" / "plugin" / "yours.js").write_text("// your plugin")
    (home / ".local" / "share" / "opencode").mkdir(parents=True)
    (home / ".local" / "share" / "opencode" / "auth.json").write_text('{"openai": {}}')
    (tmp_path / "scratch").mkdir()
    made = agent_home.make("opencode", tmp_path / "scratch", {"HOME": str(home)})
    assert made is not None
    assert set(made.env) == {"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"}
    config, data = Path(made.env["XDG_CONFIG_HOME"]), Path(made.env["XDG_DATA_HOME"])
    assert (config / "opencode" / "opencode.json").read_text() == '{"theme": "x"}'
    assert not (config / "opencode" / "plugin").exists()  # code is not settings: left out
    assert (data / "opencode" / "auth.json").read_text() == '{"openai": {}}'
    assert Path(made.env["XDG_STATE_HOME"]).is_dir()


def test_only_a_refreshed_login_goes_back(tmp_path: Path) -> None:
    home = user_home(tmp_path)
    (tmp_path / "scratch").mkdir()
    made = agent_home.make("claude", tmp_path / "scratch", {"HOME": str(home)})
    assert made is not None
    private = Path(made.env["CLAUDE_CONFIG_DIR"])
    (private / "settings.json").write_text(json.dumps({"hooks": {"Stop": []}}))  # planted
    (private / ".credentials.json").write_text(REFRESHED)
    assert agent_home.keep_login(made) == []
    assert (home / ".claude" / "settings.json").read_text() == '{"model": "opus"}'
    assert (home / ".claude" / ".credentials.json").read_text() == REFRESHED
    assert (home / ".claude" / ".credentials.json").stat().st_mode & 0o777 == 0o600


def test_a_login_that_is_not_json_or_raced_another_refresh_stays_out(tmp_path: Path) -> None:
    home = user_home(tmp_path)
    yours = home / ".claude" / ".credentials.json"
    for scratch, written, meanwhile in [
        ("a", "not json", None),
        ("b", REFRESHED, REFRESHED.replace("a2", "another unit refreshed it first")),
    ]:
        (tmp_path / scratch).mkdir()
        made = agent_home.make("claude", tmp_path / scratch, {"HOME": str(home)})
        assert made is not None
        (Path(made.env["CLAUDE_CONFIG_DIR"]) / ".credentials.json").write_text(written)
        if meanwhile:
            yours.write_text(meanwhile)
        before = yours.read_text()
        assert len(agent_home.keep_login(made)) == 1  # a note for the unit's transcript
        assert yours.read_text() == before
