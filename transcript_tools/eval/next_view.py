"""The next view of a policy's action, as the action scorer looks for probes in it
(eval/policy_probes.py): the view less what the action added (``rest``: the messages it
kept and the placeholders and summaries of earlier actions), the view itself (``rest``
and what was added) and the truncation floor (``rest`` and the first tokens of what was
removed). Most probes are found in ``rest`` alone, and both others hold all of it, so the
view and the truncation are built only when a probe ``rest`` does not carry asks.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..engine.tokens import estimate_text_tokens
from .artifacts import CONSTRAINT, REQUEST
from .haystack import JoinedHaystack, ViewHaystack
from .normalize import normalize
from .probes import Probe
from .score import ConversationProbes, recalled, terms_needed


@dataclass(slots=True)
class NextView:
    """The next view's variants (module docstring) over ``rest``, the view less what the
    action added: ``view`` and ``truncation`` are built when a probe ``rest`` does not
    carry first asks for them."""

    probes: ConversationProbes
    rest: ViewHaystack
    removed: list[int]
    added_raw: str
    _view: JoinedHaystack | None = None
    _truncation: JoinedHaystack | None = None

    def in_rest(self, probe: Probe) -> bool:
        """``recalled(probe, rest)``. A request or a constraint is answered at once when
        rest's history messages alone hold enough of its key terms, counted as ``covers``
        counts them (ASCII ones as words, then CJK ones in the squashed text): a term a
        message holds, every view showing the message holds, and what else rest shows
        can only add to them. Most probes looked for are found so, action after action."""
        kind, rest = probe.kind, self.rest
        if kind in (REQUEST, CONSTRAINT) and probe.terms:
            mask, history, need = rest.mask, rest.history, terms_needed(probe)
            found = 0
            for held in history.word_masks(probe):
                if held & mask:
                    found += 1
                    if found >= need:
                        return True
            cjk = probe.cjk_terms
            for term in cjk if found + len(cjk) >= need else ():
                if history.squashed_mask(term) & mask:
                    found += 1
                    if found >= need:
                        return True
        return recalled(probe, rest)

    def view(self) -> JoinedHaystack:
        if self._view is None:
            self._view = JoinedHaystack(self.rest, normalize(self.added_raw))
        return self._view

    def truncation(self) -> JoinedHaystack:
        if self._truncation is None:
            probes = self.probes
            budget = estimate_text_tokens(self.added_raw)
            whole, cut = probes.truncate_indices(self.removed, budget)
            cut_text = " ".join([*(probes.norm_block(i) for i in whole), normalize(cut)])
            self._truncation = JoinedHaystack(self.rest, cut_text.strip())
        return self._truncation


def dedup(pairs: list[tuple[Probe, bool]]) -> list[tuple[Probe, bool]]:
    """Each (kind, normalized text) once, the first kept (as ``ConversationProbes.probes``)."""
    seen: set[tuple[str, str]] = set()
    out = []
    for probe, carried in pairs:
        ident = (probe.kind, probe.key)
        if ident not in seen:
            seen.add(ident)
            out.append((probe, carried))
    return out


def rule_counts(lines: list[str]) -> dict[str, int]:
    """Violations per rule code, from their lines (``validity.Violation.__str__``:
    ``api: message N: rule: text``)."""
    out: dict[str, int] = {}
    for line in lines:
        rule = line.split(": ", 3)[2]
        out[rule] = out.get(rule, 0) + 1
    return out
