"""Recall over the whole view (eval/view_recall.py): every artifact probe of the history up
to an action, looked for in the whole next view, beside the action's own recall (the
probes it took out of the view), counted by hand on the conversation of
tests/eval/test_eval_policy.py."""

from __future__ import annotations

from pathlib import Path

from tests.eval.test_eval_policy import CLEAR, MESSAGES, SUMMARIZE, _actions
from transcript_tools.eval.haystack import Haystack
from transcript_tools.eval.normalize import normalize
from transcript_tools.eval.policy_probes import visible_text
from transcript_tools.eval.score import ConversationProbes, artifact_hits
from transcript_tools.eval.view_recall import whole_view_hits

# The artifact probes of MESSAGES, by message (requests left out):
#   0 path src/app/dates.py | 1 command pytest tests/test_dates.py
#   2 path tests/test_dates.py, error ValueError: month must be in 1..12
#   4 version 2.8.2 | 5 symbol parse_month | 6 version 2.4.1
#   7 command git commit -am fix | 8 commit 1a2b3c4d


def test_a_probe_kept_verbatim_counts_in_view_recall_not_in_the_actions(tmp_path: Path) -> None:
    first, second = _actions(tmp_path, CLEAR, whole_view=True)
    # c2's result arrives (history 0-4): message 2's result is cleared. The action took
    # out 2 probes: tests/test_dates.py (still in message 1's command) and the error
    # (only message 2 said it): 1 of 2.
    assert artifact_hits([first], "view") == (1, 2)
    # The whole view: 5 probes of messages 0-4; src/app/dates.py (message 0), the pytest
    # command (1) and 2.8.2 (4) are kept verbatim, tests/test_dates.py is found in
    # message 1, the error is gone: 4 of 5.
    assert first["whole_view"] == [4, 5]
    # c3's result (history 0-8): message 4 is cleared, its 2.8.2 lost: 0 of 1; over the
    # whole view 9 probes, the error and 2.8.2 gone: 7 of 9.
    assert artifact_hits([second], "view") == (0, 1)
    assert second["whole_view"] == [7, 9]


def test_where_everything_left_the_view_both_recalls_agree(tmp_path: Path) -> None:
    (summary,) = _actions(tmp_path, SUMMARIZE, whole_view=True)
    # messages 0-8 summarized, "Done." kept: the 9 probes are all the action's, and the
    # summary names src/app/dates.py and parse_month: 2 of 9 either way
    assert artifact_hits([summary], "view") == (2, 9)
    assert summary["whole_view"] == [2, 9]


def test_view_recall_is_only_computed_when_asked_for(tmp_path: Path) -> None:
    records = _actions(tmp_path, CLEAR)
    assert len(records) == 2 and not any("whole_view" in r for r in records)


def test_the_rule_looks_past_a_verbatim_message_only_when_it_misses() -> None:
    probes = ConversationProbes(MESSAGES, 500)

    def text(i: int) -> str:
        return normalize(visible_text(MESSAGES[i], 500))

    # history 0-2, a view of message 0 alone (messages 1 and 2 hidden): its path is kept
    # verbatim; the command, tests/test_dates.py and the error are not in "fixing dates"
    view = Haystack(text(0) + " fixing dates")
    assert whole_view_hits(probes, 3, {0}, text, view) == (1, 4)
    # the same view naming tests/test_dates.py (a summary, say) keeps that probe too
    view = Haystack(text(0) + " see tests/test_dates.py")
    assert whole_view_hits(probes, 3, {0}, text, view) == (2, 4)
