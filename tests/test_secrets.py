"""Secret names and values: which variables hold secrets, and how their values are scrubbed."""

from __future__ import annotations

import pytest

from taskhand.secrets import (
    REDACTED,
    SECRET_NAME,
    Redactor,
    is_secret_name,
    redact,
    secret_values,
)

ENV = {
    "PATH": "/usr/bin:/bin",
    "HOME": "/home/someone",
    "MAX_TOKENS": "4096",
    "OPENAI_API_KEY": "sk-openai-abcdef",
    "GITHUB_TOKEN": "ghp_0123456789",
    "AWS_SECRET_ACCESS_KEY": "aws/secret/value",
    "PASSWORD": "hunter22",
    "SHORT_TOKEN": "abc",
}


@pytest.mark.parametrize(
    "name",
    [
        "GITHUB_TOKEN",
        "AWS_SECRET_ACCESS_KEY",
        "PASSWORD",
        "DB_PASSWD",
        "OPENAI_API_KEY",
        "anthropic_api_key",
        "GOOGLE_APPLICATION_CREDENTIALS",
        "HF_TOKEN",
        "MY_SECRET",
        "TOKENS_SECRET",
    ],
)
def test_secret_names_are_matched(name: str) -> None:
    assert is_secret_name(name)
    assert SECRET_NAME.search(name)


@pytest.mark.parametrize(
    "name", ["MAX_TOKENS", "PATH", "HOME", "LANG", "OPENAI_BASE_URL", "TERM", "num_tokens"]
)
def test_ordinary_names_are_not_matched(name: str) -> None:
    assert not is_secret_name(name)


def test_secret_values_are_longest_first_and_skip_short_ones() -> None:
    values = secret_values(ENV, extra=["config-api-key-123", "tiny", ""])
    assert values == [
        "config-api-key-123",
        "aws/secret/value",
        "sk-openai-abcdef",
        "ghp_0123456789",
        "hunter22",
    ]
    assert "abc" not in values  # SHORT_TOKEN: too short to redact without shredding text
    assert "4096" not in values  # MAX_TOKENS is not a secret


def test_secret_values_default_to_the_process_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-from-env-1")
    assert "tok-from-env-1" in secret_values()


def test_secret_values_are_unique() -> None:
    values = secret_values({"A_KEY": "same-value", "B_KEY": "same-value"}, extra=["same-value"])
    assert values == ["same-value"]


def test_redact_replaces_every_occurrence() -> None:
    text = "key=sk-openai-abcdef; again sk-openai-abcdef; token ghp_0123456789."
    assert redact(text, ["sk-openai-abcdef", "ghp_0123456789"]) == (
        f"key={REDACTED}; again {REDACTED}; token {REDACTED}."
    )


def test_redact_takes_the_longer_of_overlapping_secrets_whole() -> None:
    # Given shortest first, a one-at-a-time replace would leave "-suffix" showing.
    assert redact("x secret-base-suffix y", ["secret-base", "secret-base-suffix"]) == (
        f"x {REDACTED} y"
    )


def test_redact_treats_secrets_literally_and_ignores_empty_ones() -> None:
    assert redact("a.b*c+d(e) and abbc", ["a.b*c+d(e)", ""]) == f"{REDACTED} and abbc"
    assert redact("nothing to hide", []) == "nothing to hide"


def test_redactor_scrubs_text_from_the_environment_and_extra() -> None:
    redactor = Redactor(ENV, extra=["config-api-key-123"])
    line = "used sk-openai-abcdef and config-api-key-123 with 4096 max tokens, pw hunter22"
    assert redactor(line) == (f"used {REDACTED} and {REDACTED} with 4096 max tokens, pw {REDACTED}")


def test_redactor_reads_the_process_environment_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-123456")
    assert Redactor()("echo sk-test-123456") == f"echo {REDACTED}"


def test_redactor_value_redacts_nested_strings_and_keeps_other_values() -> None:
    redactor = Redactor({"GITHUB_TOKEN": "ghp_0123456789"})
    event = {
        "role": "tool",
        "content": "cloned with ghp_0123456789",
        "calls": [{"arguments": '{"token": "ghp_0123456789"}', "n": 3}, ("ghp_0123456789", None)],
        "ghp_0123456789": True,
        "cost": 0.25,
    }
    cleaned = redactor.value(event)
    assert cleaned == {
        "role": "tool",
        "content": f"cloned with {REDACTED}",
        "calls": [{"arguments": f'{{"token": "{REDACTED}"}}', "n": 3}, (REDACTED, None)],
        REDACTED: True,
        "cost": 0.25,
    }
    assert event["content"] == "cloned with ghp_0123456789"  # copied, not changed in place


def test_redactor_without_secrets_changes_nothing() -> None:
    redactor = Redactor({"PATH": "/usr/bin"})
    assert redactor.secrets == ()
    assert redactor("/usr/bin/env") == "/usr/bin/env"
    assert redactor.value({"a": ["b", 1]}) == {"a": ["b", 1]}


def test_redactor_repr_does_not_show_the_secrets() -> None:
    redactor = Redactor(ENV)
    assert "hunter22" not in repr(redactor)
    assert "sk-openai" not in repr(redactor)
