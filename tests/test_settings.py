"""Routing in layers: the plan's taskhand.toml, then TASKHAND_* variables, then flags."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskhand.config import PromptCaps
from taskhand.settings import (
    Review,
    Route,
    SettingsError,
    env_pass,
    prompt_caps,
    review,
    routing,
)


def plan_with(tmp_path: Path, text: str | None) -> Path:
    if text is not None:
        (tmp_path / "taskhand.toml").write_text(text)
    return tmp_path


def test_defaults_without_a_file(tmp_path: Path) -> None:
    assert routing(plan_with(tmp_path, None), env={}).run == Route("replay", None)


def test_the_file_then_the_environment_then_flags(tmp_path: Path) -> None:
    plan = plan_with(
        tmp_path,
        '[run]\nagent = "openai"\nmodel = "qwen"\n'
        '[roles.evaluator]\nagent = "claude"\nmodel = "opus"\n',
    )
    assert routing(plan, env={}).run == Route("openai", "qwen")
    assert routing(plan, env={"TASKHAND_MODEL": "llama"}).run == Route("openai", "llama")
    assert routing(plan, "codex", env={}).run == Route("codex", None)
    assert routing(plan, "codex", "gpt-5", env={}).run == Route("codex", "gpt-5")
    assert routing(plan, env={"TASKHAND_AGENT": "gemini"}).run == Route("gemini", None)
    roles = routing(plan, env={})
    assert roles.for_role("evaluator") == Route("claude", "opus")
    assert roles.for_role("implementer") == Route("openai", "qwen")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[run\n", "correct the TOML"),
        ("[jobs]\nn = 2\n", "unknown section [jobs]"),
        ("[run]\nagents = 'x'\n", "[run] agents"),
        ("[roles.evaluator]\nagent = 3\n", "[roles.evaluator]"),
        ("[review]\nlenses = ['style']\n", "[review] lenses"),
        ("[review]\nlenses = []\n", "[review] lenses"),
        ("[review]\nlenses = ['tests', 'tests']\n", "[review] lenses"),
        ("[review]\nbounces = 0\n", "[review] bounces"),
        ("[review]\nbounces = true\n", "[review] bounces"),
        ("[review]\nrounds = 2\n", "[review] rounds"),
        ("[prompts]\nplan_bytes = -1\n", "[prompts] plan_bytes"),
        ("[prompts]\nplan = 100\n", "[prompts] plan"),
        ("[env]\npass = 'DATABASE_URL'\n", "[env] pass = 'DATABASE_URL'"),
        ("[env]\npass = [1]\n", "[env] pass = [1]"),
        ("[env]\npass = ['DATABASE_URL=x']\n", "'DATABASE_URL=x', not a variable name"),
        ("[env]\npass = ['$HOME']\n", "'$HOME', not a variable name"),
        ("[env]\npass = ['A', 'A']\n", "names a variable twice"),
        ("[env]\nkeep = ['A']\n", "[env] keep"),
    ],
)
def test_a_bad_file_says_where_and_how_to_fix(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(SettingsError, match=r"taskhand\.toml: .*\(fix: ") as caught:
        routing(plan_with(tmp_path, text), env={})
    assert message in str(caught.value)


def test_review_and_prompt_caps_from_the_file(tmp_path: Path) -> None:
    assert review(plan_with(tmp_path, None)) == Review(None, None)
    assert prompt_caps(tmp_path) == PromptCaps()
    plan = plan_with(
        tmp_path,
        "[review]\nlenses = ['correctness', 'security']\nbounces = 2\n"
        "[prompts]\nplan_bytes = 3000\nledger_entries = 2\n",
    )
    assert review(plan) == Review(["correctness", "security"], 2)
    assert prompt_caps(plan) == PromptCaps(plan_bytes=3000, ledger_entries=2)


def test_the_variables_a_plan_passes(tmp_path: Path) -> None:
    assert env_pass(plan_with(tmp_path, None)) == []
    plan = plan_with(tmp_path, '[env]\npass = ["DATABASE_URL", "PGHOST", "_X1"]\n')
    assert env_pass(plan) == ["DATABASE_URL", "PGHOST", "_X1"]
