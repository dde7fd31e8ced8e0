"""``tsum fidelity``: every recorded compaction of a corpus against a policy's replay.

Without a policy each log is replayed with the preset of its own runtime
(``RUNTIME_PRESETS``); a log of a runtime that has none is skipped with a warning (once
per format). The rows, the per-runtime summaries and the agreement a CI gate compares
with ``--min-agreement`` (docs/fidelity.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..engine.messages import Conversation
from ..engine.policy import Policy
from ..engine.policy_toml import preset, resolve_policy
from ..engine.runtime_policy import RUNTIME_PRESETS
from ..formats.corpus import CorpusReader
from ..reporter import QUIET, Reporter, session_warning
from .records import FidelityRow, RuntimeSummary, summarize
from .replay import compaction_rows


@dataclass(slots=True)
class FidelityResult:
    rows: list[FidelityRow]
    files: int = 0
    failed: int = 0
    sessions: int = 0
    skipped_formats: dict[str, int] = field(default_factory=dict)  # no preset: sessions
    errors: list[str] = field(default_factory=list)  # the files that failed, as sweep and eval

    def summaries(self, *, by_version: bool = False) -> list[RuntimeSummary]:
        return summarize(self.rows, by_version=by_version)

    @property
    def agreement(self) -> float | None:
        """Share of the scored compactions (automatic, version known) fired within one call."""
        return summarize(self.rows)[-1].agreement


def fidelity_paths(
    paths: list[str],
    *,
    policy: Policy | str | None = None,
    fmt: str | None = None,
    skip_bad_lines: bool = False,
    follow: bool = True,
    reporter: Reporter = QUIET,
) -> FidelityResult:
    """The fidelity rows of every recorded compaction under ``paths``; ``policy``: a preset
    name or a policy file for every log (None: each log's runtime's preset); ``follow``:
    presets follow the runtime release and model each compaction records."""
    chosen = resolve_policy(policy) if isinstance(policy, str) else policy
    reader = CorpusReader(fmt, skip_bad_lines, reporter)
    result = FidelityResult([])
    for conv in reader.conversations(paths):
        if not _readable(conv, reporter):
            continue
        result.sessions += 1
        if not conv.compactions:
            continue
        name = RUNTIME_PRESETS.get(conv.format)
        own = None if name is None else preset(name)
        used = chosen
        if used is None:
            if own is None:
                skipped = result.skipped_formats
                if conv.format not in skipped:
                    reporter.warn(
                        f"warning: {conv.path}: no preset for {conv.format} logs (use --policy)"
                    )
                skipped[conv.format] = skipped.get(conv.format, 0) + 1
                continue
            used = own
        result.rows.extend(compaction_rows(conv, used, follow=follow, own=own))
    result.files, result.failed = reader.stats.files, reader.stats.failed_files
    result.errors = list(reader.stats.errors)
    return result


def _readable(conv: Conversation, reporter: Reporter) -> bool:
    """Report what the session's reader dropped or ignored (a rewound branch, canned
    replies...), as replay and inspect do; False when nothing was read (a file forced
    into a format it is not in)."""
    where = conv.path if conv.line is None else f"{conv.path}:{conv.line}"
    for warning in conv.own_warnings():
        reporter.warn(session_warning(where, conv.session_id, warning))
    return conv.empty_warning() is None
