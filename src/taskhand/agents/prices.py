"""Dollars per million tokens for a few common models, to estimate a unit's cost when the
provider reports none. A TOML or JSON file named by TASKHAND_PRICES adds to or overrides them.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from taskhand.agents.base import AgentError
from taskhand.unit import Usage

ENV = "TASKHAND_PRICES"


@dataclass(frozen=True)
class Price:
    """List prices in dollars per million tokens; input read from the prompt cache costs
    `cached`, input written to it `cache_write`."""

    input: float
    output: float
    cached: float | None = None  # None: cached tokens cost as much as other input
    cache_write: float | None = None  # None: writing to the cache costs nothing extra


# Published list prices; verify before relying on them, and override through TASKHAND_PRICES.
DEFAULT: dict[str, Price] = {
    "gpt-4o": Price(2.50, 10.00, 1.25),
    "gpt-4o-mini": Price(0.15, 0.60, 0.075),
    "gpt-4.1": Price(2.00, 8.00, 0.50),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10),
    "gpt-4.1-nano": Price(0.10, 0.40, 0.025),
    "o3": Price(2.00, 8.00, 0.50),
    "o4-mini": Price(1.10, 4.40, 0.275),
    "gpt-5": Price(1.25, 10.00, 0.125),
    "gpt-5-mini": Price(0.25, 2.00, 0.025),
    "gpt-5-nano": Price(0.05, 0.40, 0.005),
    # Gemini API, prompts up to 200k tokens (longer ones cost more); thinking bills as output.
    "gemini-2.5-pro": Price(1.25, 10.00, 0.125),
    "gemini-2.5-flash": Price(0.30, 2.50, 0.03),
    "gemini-2.5-flash-lite": Price(0.10, 0.40, 0.01),
    "gemini-3-pro-preview": Price(2.00, 12.00, 0.20),
    "gemini-3-flash-preview": Price(0.50, 3.00, 0.05),
    # Anthropic API: cache reads at 0.1x input, writes to the 5-minute cache at 1.25x.
    "claude-opus-4-5": Price(5.00, 25.00, 0.50, 6.25),
    "claude-sonnet-4-5": Price(3.00, 15.00, 0.30, 3.75),
    "claude-haiku-4-5": Price(1.00, 5.00, 0.10, 1.25),
    "claude-opus-4-1": Price(15.00, 75.00, 1.50, 18.75),
    "claude-sonnet-4": Price(3.00, 15.00, 0.30, 3.75),
}


def table(env: Mapping[str, str] | None = None) -> dict[str, Price]:
    """The default prices, overridden by the file that TASKHAND_PRICES names, if any."""
    path = (os.environ if env is None else env).get(ENV, "")
    return {**DEFAULT, **load(Path(path))} if path else dict(DEFAULT)


def load(path: Path) -> dict[str, Price]:
    """Prices from a file: a table of model -> {input, output, cached, cache_write} in dollars
    per million tokens (cached and cache_write optional)."""
    fix = '(fix: write entries like ["gpt-4o"] input = 2.5, output = 10, cached = 1.25)'
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else tomllib.loads(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentError(f"price file {path}: cannot be read ({exc}) (fix: set {ENV})") from None
    except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
        raise AgentError(f"price file {path}: {exc} (fix: correct its syntax)") from None
    if not isinstance(data, dict):
        raise AgentError(f"price file {path}: not a table of models {fix}")
    prices: dict[str, Price] = {}
    for model, entry in data.items():
        price = _price(entry)
        if price is None:
            raise AgentError(f"price file {path}: model {model!r} {fix}")
        prices[str(model)] = price
    return prices


def estimate(model: str, usage: Usage, prices: Mapping[str, Price] | None = None) -> float | None:
    """Dollars for `usage` on `model` at list prices; None when the model has no price.

    `usage.tokens_in` counts all prompt tokens, cache reads and writes among them; thinking is
    inside `tokens_out` and bills as output. A provider prefix ("openai/gpt-4o") is tried
    without it when the full name has no price.
    """
    known = DEFAULT if prices is None else prices
    price = known.get(model) or known.get(model.rsplit("/", 1)[-1])
    if price is None:
        return None
    cached = min(usage.tokens_cached, usage.tokens_in)
    written = min(usage.tokens_cache_write, usage.tokens_in - cached)
    cached_rate = price.input if price.cached is None else price.cached
    write_rate = price.input if price.cache_write is None else price.cache_write
    dollars = (
        (usage.tokens_in - cached - written) * price.input
        + cached * cached_rate
        + written * write_rate
        + usage.tokens_out * price.output
    )
    return dollars / 1_000_000


def _price(entry: object) -> Price | None:
    if not isinstance(entry, dict) or set(entry) - {"input", "output", "cached", "cache_write"}:
        return None
    rate_in, rate_out = entry.get("input"), entry.get("output")
    cached, written = entry.get("cached"), entry.get("cache_write")
    if not (_is_rate(rate_in) and _is_rate(rate_out)):
        return None
    if not all(rate is None or _is_rate(rate) for rate in (cached, written)):
        return None
    return Price(float(rate_in), float(rate_out), _optional(cached), _optional(written))


def _optional(rate: object) -> float | None:
    return float(rate) if _is_rate(rate) else None


def _is_rate(value: object) -> TypeGuard[int | float]:
    return isinstance(value, int | float) and not isinstance(value, bool) and value >= 0
