"""The secret rule: which names and which shapes of value are secret, and how the Redactor
scrubs them from what is stored or shown."""

from __future__ import annotations

import hashlib
import secrets
import string
import uuid

import pytest

from taskhand.host.secrets import (
    REDACTED,
    SECRET_NAME,
    Redactor,
    is_secret_name,
    redact,
    scrub_shapes,
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
        "GH_PAT",
        "NPM_AUTH",
        "SENTRY_DSN",
        "HTTP_AUTHORIZATION",
        "SESSION_COOKIE",
    ],
)
def test_secret_names_are_matched(name: str) -> None:
    assert is_secret_name(name)
    assert SECRET_NAME.search(name)


@pytest.mark.parametrize(
    "name",
    [
        "MAX_TOKENS",
        "PATH",
        "PYTHONPATH",
        "HOME",
        "LANG",
        "OPENAI_BASE_URL",
        "TERM",
        "num_tokens",
        "GIT_AUTHOR_NAME",
        "XAUTHORITY",
        "DATABASE_URL",
    ],
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


# ---- secret shapes: values that are secret whatever name they stand under

ALNUM = string.ascii_letters + string.digits


def rand(n: int, alphabet: str = ALNUM) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(n))


SHAPED = {
    "GitHub classic": lambda: "ghp_" + rand(36),
    "GitHub OAuth": lambda: "gho_" + rand(36),
    "GitHub server": lambda: "ghs_" + rand(36),
    "GitHub fine-grained": lambda: "github_pat_" + rand(22) + "_" + rand(59),
    "OpenAI project": lambda: "sk-proj-" + rand(40, ALNUM + "-_"),
    "OpenAI legacy": lambda: "sk-" + rand(20) + "T3BlbkFJ" + rand(20),
    "Anthropic": lambda: "sk-ant-api03-" + rand(80, ALNUM + "-_"),
    "Slack bot": lambda: "xoxb-" + rand(12, string.digits) + "-" + rand(24),
    "AWS access key id": lambda: "AKIA" + rand(16, string.ascii_uppercase + string.digits),
    "AWS temporary id": lambda: "ASIA" + rand(16, string.ascii_uppercase + string.digits),
    "GitLab": lambda: "glpat-" + rand(20, ALNUM + "-_"),
    "npm": lambda: "npm_" + rand(36),
    "Google API key": lambda: "AIza" + rand(35, ALNUM + "-_"),
    "Stripe live": lambda: "sk_live_" + rand(24),
    "Stripe restricted": lambda: "rk_live_" + rand(24),
    "Hugging Face": lambda: "hf_" + rand(34),
    "JSON Web Token": lambda: "eyJ" + rand(30) + ".eyJ" + rand(40) + "." + rand(43),
}


@pytest.mark.parametrize("kind", SHAPED)
def test_known_token_shapes_are_redacted_in_running_text(kind: str) -> None:
    token = SHAPED[kind]()
    text = f"cloning with {token}, then done\n'{token}'"
    assert scrub_shapes(text) == f"cloning with {REDACTED}, then done\n'{REDACTED}'"


@pytest.mark.parametrize(
    "block",
    [
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1r\nAAAAB3Nza==\n"
        "-----END OPENSSH PRIVATE KEY-----",
        "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,0A1B\n\n"
        "MIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
    ],
)
def test_a_private_key_block_is_redacted_whole(block: str) -> None:
    assert scrub_shapes(f"key:\n{block}\nafter") == f"key:\n{REDACTED}\nafter"


def test_a_urls_password_is_redacted_and_the_rest_kept() -> None:
    text = "DATABASE_URL=postgres://app:S3cretPassw0rd@db.example/app and https://u:p@h/x"
    assert scrub_shapes(text) == (
        f"DATABASE_URL=postgres://app:{REDACTED}@db.example/app and https://u:{REDACTED}@h/x"
    )


def test_a_dsns_key_is_redacted_and_a_plain_user_name_kept() -> None:
    key = secrets.token_hex(16)
    text = f"SENTRY=https://{key}@o123.ingest.sentry.io/456 from https://git@github.com/o/r"
    assert scrub_shapes(text) == (
        f"SENTRY=https://{REDACTED}@o123.ingest.sentry.io/456 from https://git@github.com/o/r"
    )


def test_a_bearer_token_is_redacted() -> None:
    token = rand(32)
    assert scrub_shapes(f"Authorization: Bearer {token}") == f"Authorization: Bearer {REDACTED}"


@pytest.mark.parametrize(
    "line",
    [
        "MY_SETTING={v}",
        "my_setting: {v}",
        '{{"my_setting": "{v}"}}',
        '"{{\\"my_setting\\": \\"{v}\\"}}"',  # the same, JSON inside a JSON string
        "export SERVICE_HANDLE='{v}'",
    ],
)
def test_a_random_value_after_a_plain_key_is_redacted(line: str) -> None:
    value = "Ab1" + rand(29)  # mixed case and digits, as generated credentials are
    assert scrub_shapes(line.format(v=value)) == line.format(v=REDACTED)


def test_under_a_secret_looking_key_hex_and_shorter_values_are_redacted_too() -> None:
    digest = secrets.token_hex(20)
    assert scrub_shapes(f"API_KEY={digest}") == f"API_KEY={REDACTED}"
    assert scrub_shapes("db_password: hunter2hunter2") == f"db_password: {REDACTED}"
    assert scrub_shapes('"client_secret": "x9Yz7Wv5"') == f'"client_secret": "{REDACTED}"'


@pytest.mark.parametrize(
    "text",
    [
        f"commit {hashlib.sha1(b'x').hexdigest()}",
        f"sha={hashlib.sha1(b'y').hexdigest()}",
        f"digest: sha256:{hashlib.sha256(b'x').hexdigest()}",
        f"id={uuid.UUID(int=12345678901234567890)}",
        '"integrity": "sha512-' + "Ab1" + "x" * 60 + '=="',
        "model: claude-sonnet-4-20250514",
        "run_id=20261202-140000-ab12",
        "created=2026-12-02T14:00:00.123Z",
        "PATH=/usr/local/bin:/usr/bin",
        "PYTHONPATH=/home/Someone/Projects2024/src",
        "pip install scikit-learn; sk-learn; task-list-of-many-things-2024-final",
        "max_tokens: 4096; tokens_in=1200",
        "api_key = os.environ; secret = settings.SECRET_KEY",
        "password: changeme",
        "GIT_AUTHOR_NAME=Tess Ter",
        "https://git@github.com/org/repo.git http://localhost:8080/path",
        "basic configuration, bearer of bad news",
    ],
)
def test_ordinary_output_is_left_alone(text: str) -> None:
    assert scrub_shapes(text) == text


def test_a_shaped_value_under_a_plain_name_is_known_wherever_it_appears() -> None:
    token = "sk-proj-" + rand(40)
    pat = "ghp_" + rand(36)
    env = {"MY_SETTING": token, "HELPER": pat, "PATH": "/usr/bin", "HOSTNAME": "a1b2c3d4e5f6"}
    redactor = Redactor(env)
    assert set(redactor.secrets) == {token, pat}
    # Cut out of its shape's context (no prefix boundary, no key), still caught by value.
    assert redactor(f"x{token}x and {pat[4:]}") == f"x{REDACTED}x and {pat[4:]}"
    assert redactor(f"{pat}") == REDACTED


def test_a_url_password_in_the_environment_is_known_in_both_spellings() -> None:
    redactor = Redactor({"DATABASE_URL": "postgres://app:p%40ss%2Fw0rd!@db/app"})
    assert set(redactor.secrets) == {"p%40ss%2Fw0rd!", "p@ss/w0rd!"}
    assert redactor("connecting with p@ss/w0rd! as app") == f"connecting with {REDACTED} as app"


def test_the_redactor_scrubs_shapes_without_any_known_secret() -> None:
    token = "npm_" + rand(36)
    redactor = Redactor({})
    assert redactor.secrets == ()
    assert redactor.value({"log": [f"auth {token}"]}) == {"log": [f"auth {REDACTED}"]}
