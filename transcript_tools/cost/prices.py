"""Prices per model call: genai-prices' bundled data, or an override.

genai-prices ships its price table inside the wheel (``genai_prices/data.py``) and is
used here without its auto-update, so nothing is fetched at run time. Its prices carry
start dates; a call is priced at ``price_date`` (default :data:`DEFAULT_PRICE_DATE`, a
fixed day, so the same input prices the same on every day). ``--price-per-mtok`` (every
model) and a prices file (per model) override it. Every figure carries the source it
was priced from (:attr:`Quote.source`). docs/cost.md compares the alternatives.
"""

from __future__ import annotations

import datetime
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from ..errors import ConfigError
from .tokens import CallTokens

# The day prices are looked up for when none is given: prices change, a report must not
# change with the day it is run. genai-prices' entries each say from when they apply.
DEFAULT_PRICE_DATE = datetime.date(2026, 11, 1)
OVERRIDE_FLAG = "--price-per-mtok"
# A 1-hour cache write costs twice the base input price (a 5-minute one 1.25 times):
# platform.claude.com/docs/en/about-claude/pricing, "Model pricing".
ONE_HOUR_WRITE_FACTOR = 2.0


@dataclass(frozen=True, slots=True)
class Rates:
    """USD per million tokens. Without cache rates an override prices cached tokens as
    input; ``cache_write`` is the 5-minute write, ``cache_write_1h`` the 1-hour one."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None
    cache_write_1h: float | None = None

    def cost(self, tokens: CallTokens) -> float:
        read = self.input if self.cache_read is None else self.cache_read
        write = self.input if self.cache_write is None else self.cache_write
        return (
            tokens.fresh * self.input
            + tokens.cache_read * read
            + (tokens.cache_write - tokens.cache_write_1h) * write
            + tokens.cache_write_1h * self.one_hour_write()
            + tokens.output * self.output
        ) / 1_000_000

    def one_hour_write(self) -> float:
        """The 1-hour write rate: given, else Anthropic's 2x input where cache rates are
        given (platform.claude.com/docs/en/about-claude/pricing: 5-minute writes 1.25x,
        1-hour writes 2x the base input price), else input like every cached token."""
        if self.cache_write_1h is not None:
            return self.cache_write_1h
        return self.input if self.cache_write is None else ONE_HOUR_WRITE_FACTOR * self.input


@dataclass(frozen=True, slots=True)
class Quote:
    usd: float
    source: str  # which price list, entry and date


def parse_rates(spec: str, flag: str = OVERRIDE_FLAG) -> Rates:
    """``"3"`` (input and output alike), ``"3/15"`` (input/output) or
    ``"3/15/0.3/3.75"`` (input/output/cache read/cache write), USD per million tokens."""
    try:
        values = [float(part) for part in spec.split("/")]
    except ValueError:
        values = []
    if len(values) not in (1, 2, 4) or any(v < 0 or math.isnan(v) for v in values):
        raise ConfigError(
            f"{flag} {spec!r}: give USD per million tokens, e.g. 3, 3/15 (input/output) "
            "or 3/15/0.3/3.75 (input/output/cache read/cache write)"
        )
    if len(values) == 4:
        return Rates(*values)
    return Rates(values[0], values[-1])


def provider_of(model: str | None) -> str | None:
    """genai-prices' provider id for a model name, where the name says it."""
    name = (model or "").lower()
    if "claude" in name:
        return "anthropic"
    if name.startswith(("gpt", "o1", "o3", "o4", "codex", "chatgpt")):
        return "openai"
    return None


def read_prices_file(path: str) -> dict[str, Rates]:
    """A JSON object: model name (or dated-id prefix) -> {"input", "output", optional
    "cache_read", "cache_write", "cache_write_1h"} in USD per million tokens."""
    try:
        data = orjson.loads(Path(path).read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read prices file: {exc}") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a prices file is a JSON object of model -> rates")
    table: dict[str, Rates] = {}
    for model, entry in data.items():
        try:
            table[model] = Rates(
                float(entry["input"]),
                float(entry["output"]),
                None if entry.get("cache_read") is None else float(entry["cache_read"]),
                None if entry.get("cache_write") is None else float(entry["cache_write"]),
                None if entry.get("cache_write_1h") is None else float(entry["cache_write_1h"]),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ConfigError(
                f"{path}: {model!r}: give numbers for input and output (USD per million tokens)"
            ) from exc
    return table


def _match(model: str, table: dict[str, Rates]) -> str | None:
    for name in sorted(table, key=len, reverse=True):  # dated ids: claude-haiku-4-5-2025...
        if model == name or model.startswith(name + "-"):
            return name
    return None


@lru_cache(maxsize=1)
def _library_version() -> str:
    from importlib.metadata import version

    return version("genai-prices")


@dataclass(frozen=True, slots=True)
class Pricer:
    """Prices a call's tokens for a model: override, else prices file, else genai-prices."""

    override: Rates | None = None
    override_spec: str | None = None
    table: dict[str, Rates] | None = None
    table_path: str | None = None
    price_date: datetime.date = DEFAULT_PRICE_DATE

    @classmethod
    def from_options(
        cls, spec: str | float | None = None, prices_file: str | None = None
    ) -> Pricer:
        text = None if spec is None else str(spec)
        return cls(
            override=None if text is None else parse_rates(text),
            override_spec=text,
            table=None if prices_file is None else read_prices_file(prices_file),
            table_path=prices_file,
        )

    def rates_source(self, model: str | None) -> tuple[Rates | None, str]:
        """The linear rates an override gives for ``model``, and their source."""
        if self.override is not None:
            return self.override, f"{OVERRIDE_FLAG} {self.override_spec}"
        if self.table is not None and model:
            name = _match(model, self.table)
            if name is not None:
                return self.table[name], f"{self.table_path}: {name}"
        return None, ""

    def quote(self, model: str | None, tokens: CallTokens) -> Quote | None:
        """The call's price, or None where no source knows the model."""
        rates, source = self.rates_source(model)
        if rates is not None:
            return Quote(rates.cost(tokens), source)
        if not model:
            return None
        return self._library_quote(model, tokens)

    def list_rates(self, model: str) -> tuple[Rates, str] | None:
        """genai-prices' base rates for ``model`` (below any long-prompt tier) and their
        source: the linear price of a summary call (providers/batch/pricing.py)."""
        found = self._calc(model, CallTokens())
        if found is None:
            return None
        price = found.model_price

        def base(name: str) -> float | None:
            value = getattr(price, name, None)
            value = getattr(value, "base", value)
            return None if value is None else float(value)

        rates = Rates(
            base("input_mtok") or 0.0,
            base("output_mtok") or 0.0,
            base("cache_read_mtok"),
            base("cache_write_mtok"),
            base("cache_write_1h_mtok"),
        )
        return rates, self._library_source(found)

    def context_window(self, model: str | None) -> int | None:
        """The model's input window as genai-prices lists it (``ModelInfo.context_window``);
        None where it does not know the model or its window."""
        return None if not model else _library_window(model, self.price_date)

    def _library_source(self, found: Any) -> str:
        return (
            f"genai-prices {_library_version()}: {found.provider.id}/{found.model.id}"
            f" as of {self.price_date.isoformat()}"
        )

    def _library_quote(self, model: str, tokens: CallTokens) -> Quote | None:
        found = self._calc(model, tokens)
        if found is None:
            return None
        return Quote(float(found.total_price), self._library_source(found))

    def _calc(self, model: str, tokens: CallTokens) -> Any:
        from genai_prices import Usage, calc_price

        when = datetime.datetime.combine(self.price_date, datetime.time(), datetime.UTC)
        try:
            return calc_price(
                Usage(
                    input_tokens=tokens.prompt,
                    cache_read_tokens=tokens.cache_read,
                    cache_write_tokens=tokens.cache_write,
                    # of cache_write_tokens, the 1-hour writes (genai-prices' own split)
                    cache_write_1h_tokens=tokens.cache_write_1h or None,
                    output_tokens=tokens.output,
                ),
                model,
                provider_id=provider_of(model),
                genai_request_timestamp=when,
            )
        except LookupError:
            return None


@lru_cache(maxsize=256)
def _library_window(model: str, price_date: datetime.date) -> int | None:
    found = Pricer(price_date=price_date)._calc(model, CallTokens())
    window = None if found is None else getattr(found.model, "context_window", None)
    return window if isinstance(window, int) and window > 0 else None


def pricer_for(
    cost: bool, prices_file: str | Path | None, spec: str | float | None = None
) -> Pricer | None:
    """The run's pricer when it is priced (``--cost``; ``spec``: --price-per-mtok, used
    before ``prices_file`` and genai-prices), else None."""
    if not cost:
        return None
    return Pricer.from_options(spec, None if prices_file is None else str(prices_file))
