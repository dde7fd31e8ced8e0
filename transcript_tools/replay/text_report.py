"""The human report of a replay on stdout, when there is no ``--out``."""

from __future__ import annotations

import io
from typing import IO

from ..engine.records import DecisionRecord, SummaryRecord, UnitKey, record_unit, summary_ok
from ..engine.rules import FIRED
from ..engine.session import ESTIMATED
from ..present.numbers import grouped
from ..terminal import escaper
from .conversation import SessionResult
from .parking import Rendered


class TextReport:
    """A readable per-session report (stdout when there is no ``--out``).

    Session ids, paths, errors and summaries come from transcripts: every line is
    written with its control characters escaped (``terminal``), never raw.
    """

    spool_prompts = False

    def __init__(self, stream: IO[str], show_summaries: bool = True) -> None:
        self.stream = stream
        self.show_summaries = show_summaries

    def render(self, result: SessionResult) -> Rendered:
        """The report of a session that must wait for an earlier one (``reorder``)."""
        text = io.StringIO()
        TextReport(text, self.show_summaries).write_session(result)
        return Rendered({"report": text.getvalue().encode("utf-8", "surrogatepass")})

    def write_rendered(self, session_id: str, rendered: Rendered) -> None:
        text = rendered.records.get("report", b"").decode("utf-8", "surrogatepass")
        self.stream.write(escaper(self.stream)(text))  # controls already escaped: a no-op

    def write_session(self, result: SessionResult) -> None:
        escape = escaper(self.stream)
        for line in self.session_lines(result):
            self.stream.write(escape(line))

    def session_lines(self, result: SessionResult) -> list[str]:
        """The session's block, line by line (each escaped on its own when written)."""
        engine = result.engine
        decisions = engine.decisions
        unit = record_unit(decisions[0]) if decisions else "turn"  # --checkpoint call
        lines = _heading(result, unit)
        if decisions:
            lines += _threshold_lines(result, unit)
        lines += _decision_rows(decisions, unit)
        view_messages, view_tokens = engine.slot.view_size()
        lines.append(
            f"   next view (load_messages): {view_messages} messages, ~{grouped(view_tokens)} tokens "
            f"(full history: {len(engine.slot.messages)} messages)\n"
        )
        if engine.settings.policy is not None:
            lines.append(_policy_line(engine.settings.policy.name, decisions, engine.summaries))
        if result.cost is not None:
            from ..cost.meter import cost_line

            lines.append(f"   {cost_line(result.cost)}\n")
        latest = engine.get_conversation_summary()
        if latest and self.show_summaries:
            last = next(s for s in reversed(engine.summaries) if summary_ok(s))
            lines.append(
                f"   latest summary (turn {last['turn']}, {last['provider']}/{last['model']}):\n"
            )
            lines += [f"   | {line}\n" for line in latest.splitlines()]
        lines.append("\n")
        return lines


def _heading(result: SessionResult, unit: UnitKey) -> list[str]:
    conv, decisions = result.conversation, result.engine.decisions
    sources = sorted({d["tokens"] for d in decisions} - {"none"}) or ["none"]
    fired = [d for d in decisions if d["decision"] in FIRED]
    calls = f", {len(decisions)} calls" if unit == "call" else ""
    window = ""
    if decisions and "max_context_tokens_from" in decisions[0]:  # --max-context-tokens auto
        window = (
            f", max_context_tokens {grouped(decisions[0]['max_context_tokens'])} "
            f"(from {decisions[0]['max_context_tokens_from']})"
        )
    return [
        f"== {conv.session_id}  ({conv.format}, {conv.path})\n",
        f"   {result.turns} turns{calls}, {len(conv.messages)} messages, tokens {'/'.join(sources)}, "
        f"{len(fired)} checkpoint firing(s){window}\n",
    ]


def _threshold_lines(result: SessionResult, unit: UnitKey) -> list[str]:
    """The line, where the session first crossed it, and why no summary came if none did."""
    engine = result.engine
    decisions = engine.decisions
    fired = any(d["decision"] in FIRED for d in decisions)
    threshold = decisions[0]["threshold"]
    first_over = next(
        (d[unit] for d in decisions if threshold is not None and d["watermark"] >= threshold),
        None,
    )
    lines = [
        f"   threshold {grouped(int(threshold)) if threshold is not None else '-'} tokens; "
        f"first over it at {unit} {first_over if first_over is not None else '-'}; "
        f"final cost_so_far {grouped(decisions[-1]['cost_so_far'])}\n"
    ]
    if first_over is not None and not fired and engine.settings.summary is not None:
        debounce = engine.settings.summary.debounce_turns
        lines.append(
            f"   (over the line, but the seed's debounce holds: the first summary can come at {unit} "
            f"{debounce} at the earliest, and this session has {unit}s 0..{len(decisions) - 1})\n"
        )
    estimated = [d for d in decisions if ESTIMATED in d]
    if estimated:  # a dry run under --measure current: no summary was written
        lines.append(
            f"   estimated from {unit} {estimated[0][unit]} on: each would-be summary assumed "
            f"{grouped(estimated[0][ESTIMATED])} tokens and the view cut to the focused "
            f"window, as tsum sweep estimates it (without summaries the watermark ends at "
            f"{grouped(estimated[-1]['watermark_without_summaries'])})\n"
        )
    return lines


def _decision_rows(decisions: list[DecisionRecord], unit: UnitKey) -> list[str]:
    """The table of the units where something happened (or was recorded)."""
    shown = [
        d
        for d in decisions
        if d["decision"] not in ("below_threshold", "debounced", *_quiet_under_policy(d))
        or "recorded_compaction" in d
        or "cleared" in d
    ]
    if not shown:
        return []
    rows = [f"   {unit:>4}  turn_tokens  cost_so_far    watermark  decision\n"]
    for d in shown:
        rows.append(
            f"   {d[unit]:>4}  {grouped(d['turn_tokens']):>11}  {grouped(d['cost_so_far']):>11}  "
            f"{grouped(d['watermark']):>11}  {d['decision']}{_row_notes(d)}\n"
        )
    return rows


def _row_notes(d: DecisionRecord) -> str:
    extra = f"  ({d['error']})" if d.get("error") else ""
    if "cleared" in d:  # a policy's pre-pass (engine/policy_slot.py)
        c = d["cleared"]
        extra += (
            f"  [cleared {c['messages_cleared']} tool result(s), "
            f"-{grouped(c['freed_tokens'])} tokens]"
        )
    if "recorded_compaction" in d:
        extra += (
            "  [agent compacted here: "
            + ", ".join(c["source"] for c in d["recorded_compaction"])
            + "]"
        )
    return extra


def _quiet_under_policy(decision: DecisionRecord) -> tuple[str, ...]:
    # a pre-pass-only policy decides "disabled" at every unit: shown only where it cleared
    return ("disabled",) if "policy" in decision else ()


def _policy_line(name: str, decisions: list[DecisionRecord], summaries: list[SummaryRecord]) -> str:
    """--policy: what the policy's actions did, and the views that break an API's rules
    (engine/validity.py; the seed's own system-at-the-end is one such view)."""
    cleared = [d["cleared"] for d in decisions if "cleared" in d]
    broken: dict[str, int] = {}
    made = [s for s in summaries if summary_ok(s)]
    for summary in made:
        for api in summary.get("violations", {}):
            broken[api] = broken.get(api, 0) + 1
    apis = ", ".join(f"{api} {n}" for api, n in sorted(broken.items())) or "none"
    return (
        f"   policy {name}: {len(made)} summary view(s), "
        f"{sum(c['messages_cleared'] for c in cleared)} tool result(s) cleared "
        f"(-{grouped(sum(c['freed_tokens'] for c in cleared))} tokens); "
        f"summary views breaking a rule the log itself does not: {apis}\n"
    )
