"""The library side of ``tsum check``: baselines, seeding the cache, the --cache-only verdict.

A baseline is a committed ``tsum replay --out`` directory holding only the
diffable files (``diff.DIFFABLE_FILES`` and ``compressed/``): never
``manifest.json``, whose timings would change on every bless.

The baseline is also the recording of record: its summaries are the responses
to its prompts. ``seed_cache`` puts them into the response cache before the
replay, so an unchanged prompt reproduces the blessed summary exactly, free,
whoever recorded it and wherever (a developer's machine, another CI cache
scope) — LLM APIs are not deterministic, so only the blessed text may do.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import orjson

from ..cost.gate import COST_FILE
from ..engine.messages import Usage
from ..engine.records import summary_failed, summary_ok
from ..engine.requests import SummaryResponse
from ..engine.seed_defaults import SUMMARY_MAX_TOKENS
from ..eval.baseline import SCORES_FILE
from ..formats.inputs import OUTPUT_MARKER
from ..providers.base import Provider
from ..providers.cache import ResponseCache, cache_key
from .changes import RunDiff
from .compare import DIFFABLE_FILES, ReplayOutput

CACHE_ONLY_MARK = "--cache-only"  # in the executor's error text of a cache-only miss


@dataclass(frozen=True, slots=True)
class Missing:
    """A summary whose response was not in the cache (``--cache-only``)."""

    session: str
    turn: int


# The gates' stored figures, blessed with the records (eval's recall, the cost gate's).
GATE_FILES = (SCORES_FILE, COST_FILE)


def update_baseline(fresh: str | Path, baseline: str | Path) -> None:
    """Make ``baseline`` hold exactly the diffable files of ``fresh`` and the gates'
    figures (``GATE_FILES``): an explicit bless, written as a whole.

    The new baseline is built in a directory beside it (``.NAME.tsum-new``) and renamed
    over it: a kill at any point leaves the old baseline or the new one, never a mix of
    the two (or, in the instant between the two renames, none: ``check`` then fails, and
    ``--update`` puts the old one back before it writes). Files of ours the fresh run does not have (stale compressed
    transcripts, a manifest) are gone; other files of the baseline directory (a README)
    are carried over, symlinks as symlinks, never followed. Leftovers of an update that
    was killed are removed first, so ``--update`` always repairs.
    """
    fresh, baseline = Path(fresh), Path(baseline)
    new, old = _beside(baseline, "new"), _beside(baseline, "old")
    if old.is_dir() and not (baseline.exists() or baseline.is_symlink()):
        os.rename(old, baseline)  # killed between the two renames: the old one is whole
    for leftover in (new, old):
        _remove(leftover)
    new.mkdir(parents=True)
    (new / "compressed").mkdir()
    for name in (*DIFFABLE_FILES, *GATE_FILES, OUTPUT_MARKER):  # marked: never read as input
        if (fresh / name).is_file():
            shutil.copyfile(fresh / name, new / name)
    if (fresh / "compressed").is_dir():
        for path in sorted((fresh / "compressed").glob("*.jsonl")):
            shutil.copyfile(path, new / "compressed" / path.name)
    if baseline.is_dir() and not baseline.is_symlink():
        _carry_over(baseline, new)
    if not any((new / "compressed").iterdir()):
        (new / "compressed").rmdir()
    if baseline.exists() or baseline.is_symlink():
        os.rename(baseline, old)
    os.rename(new, baseline)
    _remove(old)


def _beside(baseline: Path, what: str) -> Path:
    return baseline.parent / f".{baseline.name}.tsum-{what}"


def _remove(path: Path) -> None:
    """Delete ``path``; a symlink is unlinked, never followed (shutil.rmtree does not
    follow the links inside a tree either)."""
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def _carry_over(baseline: Path, new: Path) -> None:
    """The baseline's files that are not tsum's (a README, notes) into ``new``."""
    ours = {*DIFFABLE_FILES, *GATE_FILES, OUTPUT_MARKER, "manifest.json", "compressed"}
    for entry in sorted(baseline.iterdir()):
        if entry.name not in ours:
            _copy_entry(entry, new / entry.name)
    compressed = baseline / "compressed"
    if compressed.is_dir() and not compressed.is_symlink():
        for entry in sorted(compressed.iterdir()):
            if not entry.name.endswith(".jsonl"):
                _copy_entry(entry, new / "compressed" / entry.name)


def _copy_entry(source: Path, target: Path) -> None:
    if source.is_dir() and not source.is_symlink():
        shutil.copytree(source, target, symlinks=True)
    else:
        shutil.copy2(source, target, follow_symlinks=False)


def seed_cache(baseline: ReplayOutput, cache: ResponseCache, provider: Provider) -> int:
    """Store the baseline's successful summaries as the responses to its prompts.

    Only when the baseline was written by the same provider; keyed with the
    baseline's model (``run.json``) and this provider's identity, exactly as the
    executor keys a request. An entry that already holds the same text is left
    alone; a different one is replaced: the blessed summary wins. Returns the
    number of entries written.
    """
    run = baseline.run
    if run.get("provider") != provider.name or run.get("dry_run"):
        return 0
    model = run.get("model") or provider.default_model
    identity = provider.identity(model)
    written = 0
    for records in baseline.sessions.values():
        for summary in records.summaries.values():
            text = summary.get("text")
            if not summary_ok(summary) or not isinstance(text, str) or not text.strip():
                continue
            usage = summary.get("usage")
            response = SummaryResponse(
                text=text,
                model=str(summary.get("model") or model),
                usage=Usage(
                    int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0)
                )
                if isinstance(usage, dict)
                else None,
            )
            key = cache_key(identity, baseline.prompt(summary["prompt_sha256"]), SUMMARY_MAX_TOKENS)
            existing = cache.get(key)
            if existing is not None and (existing.text, existing.model) == (
                response.text,
                response.model,
            ):
                continue
            cache.put(key, identity, response)
            written += 1
    return written


def cache_only_misses(output_dir: str | Path) -> list[Missing]:
    """The summaries of a replay that failed because ``--cache-only`` found no response."""
    path = Path(output_dir) / "summaries.jsonl"
    if not path.is_file():
        return []
    missing = []
    with open(path, "rb") as handle:
        for line in handle:
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue  # the diff reports a corrupt file; here only misses matter
            if summary_failed(record) and CACHE_ONLY_MARK in str(record.get("error") or ""):
                missing.append(Missing(str(record.get("session")), int(record.get("turn") or 0)))
    return missing


def cache_only_message(
    missing: list[Missing], diff: RunDiff | None, record_command: str, limit: int = 10
) -> str:
    """The one message of a --cache-only check whose responses were never recorded."""
    by_session: dict[str, list[int]] = {}
    for item in missing:
        by_session.setdefault(item.session, []).append(item.turn)
    names = list(by_session)
    where = "; ".join(f"{name} {_turn_ranges(by_session[name])}" for name in names[:limit])
    if len(names) > limit:
        where += f"; and {len(names) - limit} more session(s)"
    lines = []
    head = f"{len(missing)} summary prompt(s) have no recorded response (--cache-only)"
    unchanged = 0
    if diff is not None:
        kinds = _classify(missing, diff)
        unchanged = kinds["unchanged"]
        parts = [
            f"{kinds['changed']} changed since the baseline",
            f"{unchanged} unchanged but not in this cache",
            f"{kinds['new']} at turns where the baseline has no summary",
        ]
        head += ": " + ", ".join(p for p in parts if not p.startswith("0 "))
    lines.append(head + ", in:")
    lines.append(f"  {where}")
    if any(len(turns) > 1 for turns in by_session.values()):
        lines.append(
            "  (a summary without a response fails, and the checkpoint tries again at every later turn)"
        )
    if unchanged:
        lines.append(
            "  (unchanged prompts missing: is the cache file the one that recorded the baseline? "
            "same provider and model?)"
        )
    lines.append(
        "Record them where the provider's API key is available (cached responses are reused: only these are "
        "paid for), review the diff, then bless the new baseline:"
    )
    lines.append(f"  {record_command}")
    lines.append(f"  {record_command} --update")
    return "\n".join(lines)


def _classify(missing: list[Missing], diff: RunDiff) -> dict[str, int]:
    """Each miss: a baseline summary whose prompt changed, one whose prompt did not, or a new turn."""
    sessions = {d.session: d for d in diff.sessions}
    kinds = {"changed": 0, "unchanged": 0, "new": 0}
    for item in missing:
        session = sessions.get(item.session)
        if session is None or item.turn not in session.old_fired:
            kinds["new"] += 1
            continue
        change = next((c for c in session.summaries if c.turn == item.turn), None)
        kinds["changed" if change is not None and "prompt" in change.changed else "unchanged"] += 1
    return kinds


def _turn_ranges(turns: list[int]) -> str:
    turns = sorted(set(turns))
    parts: list[str] = []
    start = prev = turns[0]
    for turn in [*turns[1:], None]:
        if turn is not None and turn == prev + 1:
            prev = turn
            continue
        parts.append(str(start) if start == prev else f"{start}-{prev}")
        if turn is not None:
            start = prev = turn
    return ("turn " if len(turns) == 1 else "turns ") + ", ".join(parts)
