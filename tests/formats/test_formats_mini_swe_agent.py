"""mini-swe-agent 2.x trajectories: a format-error notice before the first
recorded reply, and model calls the trajectory does not record."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.corpus import FIXTURES, read
from transcript_tools.engine.messages import OBSERVATION, PERSON, UserMessage
from transcript_tools.engine.rules import turn_starts

FORMAT_ERROR = FIXTURES / "edge_cases_mini_swe_agent_format_error.traj.json"


def test_format_error_before_the_first_reply_is_an_observation() -> None:
    (conv,) = read(FORMAT_ERROR, warn=lambda _: None)
    origins = [m.origin for m in conv.messages if isinstance(m, UserMessage)]
    assert origins == [PERSON, OBSERVATION]
    assert turn_starts(conv.messages) == [0]


def test_unrecorded_api_calls_are_a_warning() -> None:
    warnings: list[str] = []
    read(FORMAT_ERROR, warn=warnings.append)
    assert warnings == [
        f"warning: {FORMAT_ERROR}: info.model_stats.api_calls is 4 but the trajectory records"
        " 3 model call(s): 1 call(s) left no message (a reply rejected, or a call that"
        " failed); tokens they used are not in the recorded usage"
    ]


def test_no_warning_when_every_call_is_recorded(tmp_path: Path) -> None:
    traj = json.loads(FORMAT_ERROR.read_text())
    traj["info"]["model_stats"]["api_calls"] = 3
    path = tmp_path / "run.traj.json"
    path.write_text(json.dumps(traj))
    warnings: list[str] = []
    read(path, warn=warnings.append)
    assert warnings == []
