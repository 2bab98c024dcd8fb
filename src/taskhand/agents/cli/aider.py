"""aider, driven the harness's way: its flags per role, a home folder of the unit's own, the
model's prices handed over in a metadata file, and its usage read back from its analytics log,
which it writes to standard output beside its text.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping
from pathlib import Path

from taskhand.agents import prices as price_list
from taskhand.agents.cli.output import Report, parse_aider
from taskhand.host.process import Call

# Every run: one message and exit; edits applied, never committed; nothing asked, fetched,
# linted or announced. `diff` is the SEARCH/REPLACE format: with the whole-file format aider
# picks for an unknown model, a line such as "Done." before a fenced block reads as a file name,
# and aider creates that file. `--map-tokens 0`: no repository map, so no tags cache in the
# worktree. Shell commands it suggests are never run under --yes-always, so it is told not to.
FLAGS = (
    "--yes-always",
    "--no-auto-commits",
    "--no-dirty-commits",
    "--no-gitignore",
    "--map-tokens",
    "0",
    "--no-pretty",
    "--no-fancy-input",
    "--no-stream",
    "--no-check-update",
    "--no-show-release-notes",
    "--no-show-model-warnings",
    "--no-analytics",
    "--no-auto-lint",
    "--no-auto-test",
    "--no-detect-urls",
    "--disable-playwright",
    "--no-suggest-shell-commands",
    "--encoding",
    "utf-8",
)
WRITER = ("--edit-format", "diff")
READER = ("--chat-mode", "ask", "--dry-run")  # answers only, and writes nothing
# Its analytics events (never sent: --no-analytics) carry each reply's exact tokens and cost;
# its text rounds them ("2.3k sent").
LOG = "/dev/stdout"
EVENT = '{"event": '
# litellm fetches its price list from the web on import unless told to use its own copy.
ENV = (("LITELLM_LOCAL_MODEL_COST_MAP", "True"),)


def call(
    program: str,
    message: str,
    *,
    scratch: Path,
    writing: bool,
    model: str | None,
    base_url: str,
    prices: Mapping[str, price_list.Price],
    resume: bool,
    extra: list[str],
) -> Call:
    """One aider run on `message` (written to a file in `scratch`): its home, histories and
    model metadata are files in `scratch`, so nothing lands in the user's home or the worktree;
    `resume` restores the chat history of the run before."""
    argv = [program, "--message-file", _write(scratch / "message.md", message), *FLAGS]
    argv += [*WRITER] if writing else [*READER]
    argv += ["--analytics-log", LOG]
    argv += ["--chat-history-file", str(scratch / "chat.md")]
    argv += ["--input-history-file", str(scratch / "input.history")]
    argv += ["--restore-chat-history" if resume else "--no-restore-chat-history"]
    if base_url:
        argv += ["--openai-api-base", base_url]
    if model:
        # An OpenAI-compatible endpoint serves models litellm may not know by name.
        named = f"openai/{model}" if base_url and "/" not in model else model
        argv += ["--model", named]
        metadata = _metadata(named, prices)
        if metadata:
            argv += ["--model-metadata-file", _write(scratch / "metadata.json", metadata)]
    home = scratch / "home"  # its analytics id, install record and price cache
    home.mkdir(exist_ok=True)
    return Call([*argv, *extra], env={"HOME": str(home)})


def parse(stdout: str) -> Report:
    """aider's text with its usage: tokens and dollars exact from the analytics events, cache
    hits and writes from the text (the events leave them out; their prompt tokens, as the
    text's "sent", count the writes); the events are left out of the text."""
    events, lines = [], []
    for line in stdout.splitlines():
        event = _event(line)
        if event is None:
            lines.append(line)
        elif event.get("event") == "message_send":
            events.append(event.get("properties") or {})
    report = parse_aider("\n".join(lines))
    if events:
        sent = sum(_number(e, "prompt_tokens") for e in events)
        received = sum(_number(e, "completion_tokens") for e in events)
        report.usage.tokens_in, report.usage.tokens_out = int(sent), int(received)
        if report.priced:
            report.usage.cost = sum(_number(e, "cost") for e in events)
    return report


def _metadata(model: str, prices: Mapping[str, price_list.Price]) -> str:
    """litellm's metadata for `model` from our price table; "" when the table has no price."""
    price = prices.get(model) or prices.get(model.rsplit("/", 1)[-1])
    if price is None:
        return ""
    entry: dict[str, object] = {
        "input_cost_per_token": price.input / 1_000_000,
        "output_cost_per_token": price.output / 1_000_000,
        "litellm_provider": model.split("/", 1)[0] if "/" in model else "openai",
        "mode": "chat",
    }
    if price.cached is not None:
        entry["cache_read_input_token_cost"] = price.cached / 1_000_000
    if price.cache_write is not None:
        entry["cache_creation_input_token_cost"] = price.cache_write / 1_000_000
    return json.dumps({model: entry}, indent=2)


def _event(line: str) -> dict[str, object] | None:
    if not line.startswith(EVENT):
        return None
    with contextlib.suppress(ValueError):
        value = json.loads(line)
        if isinstance(value, dict):
            return value
    return None


def _number(data: object, key: str) -> float:
    value = data.get(key) if isinstance(data, dict) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def _write(path: Path, text: str) -> str:
    path.write_text(text, encoding="utf-8")
    return str(path)
