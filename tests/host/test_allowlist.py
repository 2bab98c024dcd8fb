"""The environment a child gets is built from an allow-list: what is not named stays behind,
whatever its name looks like."""

from __future__ import annotations

import pytest

from taskhand.agents.cli.presets import PRESETS, variables_for
from taskhand.host.allowlist import BASE, NETWORK, agent_env, child_env
from taskhand.host.secrets import is_secret_name

USER_ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/someone",
    "USER": "someone",
    "LANG": "C.UTF-8",
    "LC_ALL": "C.UTF-8",
    "LC_TIME": "en_GB.UTF-8",
    "TZ": "Europe/Paris",
    "TMPDIR": "/tmp/someone",
    "NO_COLOR": "1",
    # Nothing below is in the base list, secret-looking name or not.
    "DATABASE_URL": "postgres://app:S3cretPassw0rd@db.example/app",
    "GH_PAT": "ghp_" + "a1" * 18,
    "SENTRY_DSN": "https://" + "0f" * 16 + "@o123.ingest.sentry.io/456",
    "MY_SETTING": "sk-proj-" + "Zx9" * 14,
    "NPM_AUTH": "npm_" + "b2" * 18,
    "OPENAI_API_KEY": "sk-openai-abcdef",
    "ANTHROPIC_API_KEY": "sk-ant-abcdef",
    "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/",
    "CLAUDE_CONFIG_DIR": "/home/someone/.claude",
    "HTTPS_PROXY": "http://proxy:3128",
    "GIT_DIR": "/home/someone/project/.git",
    "LD_PRELOAD": "/tmp/evil.so",
    "PYTHONPATH": "/home/someone/project/src",
    "lc_all": "not the locale: names are matched with their case",
}
BASE_SEEN = {
    "PATH",
    "HOME",
    "USER",
    "LANG",
    "LC_ALL",
    "LC_TIME",
    "TZ",
    "TMPDIR",
    "NO_COLOR",
}


def test_a_check_gets_the_base_list_and_nothing_else() -> None:
    env = child_env(env=USER_ENV)
    assert set(env) == BASE_SEEN
    assert env["LC_TIME"] == "en_GB.UTF-8"  # LC_* is a prefix


def test_the_plan_names_what_else_a_check_gets() -> None:
    env = child_env(passed=["DATABASE_URL", "NOT_SET_ANYWHERE"], env=USER_ENV)
    assert set(env) == BASE_SEEN | {"DATABASE_URL"}
    assert env["DATABASE_URL"] == USER_ENV["DATABASE_URL"]


def test_an_agent_gets_its_backends_variables_and_the_network_ones_too() -> None:
    claude = agent_env(PRESETS["claude"].variables, env=USER_ENV)
    assert set(claude) == BASE_SEEN | {
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_BASE_URL",
        "CLAUDE_CONFIG_DIR",
        "HTTPS_PROXY",
    }
    codex = agent_env(PRESETS["codex"].variables, ["DATABASE_URL"], USER_ENV)
    assert set(codex) == BASE_SEEN | {"OPENAI_API_KEY", "HTTPS_PROXY", "DATABASE_URL"}


def test_the_process_environment_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TASKHAND_ALLOWLIST_PROBE", "not named, not given")
    monkeypatch.setenv("HOME", "/home/probe")
    env = child_env()
    assert env["HOME"] == "/home/probe"
    assert "TASKHAND_ALLOWLIST_PROBE" not in env
    assert child_env(passed=["TASKHAND_ALLOWLIST_PROBE"])["TASKHAND_ALLOWLIST_PROBE"]


def test_the_lists_hold_no_credentials() -> None:
    # The base and network lists go to every agent; a key among them would go to all.
    assert not [name for name in (*BASE, *NETWORK) if is_secret_name(name)]


@pytest.mark.parametrize(
    ("program", "family"),
    [
        ("/opt/bin/claude-code-acp", "claude"),
        ("codex-acp", "codex"),
        ("gemini", "gemini"),
        ("/usr/bin/python3", None),
    ],
)
def test_an_acp_program_gets_the_variables_of_the_family_its_name_says(
    program: str, family: str | None
) -> None:
    expected = PRESETS[family].variables if family else ()
    assert variables_for(program) == expected
