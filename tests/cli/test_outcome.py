"""``cli/outcome.finish``: the one mapping of a run's outcome to its exit code."""

from __future__ import annotations

import pytest

from transcript_tools.cli.outcome import finish


@pytest.mark.parametrize(
    ("failed", "differences", "code"),
    [(False, False, None), (False, True, 1), (True, False, 3), (True, True, 3)],
)
def test_could_not_run_wins_over_differences(
    failed: bool, differences: bool, code: int | None
) -> None:
    if code is None:
        finish(failed=failed, differences=differences)  # success returns
        return
    with pytest.raises(SystemExit) as done:
        finish(failed=failed, differences=differences)
    assert done.value.code == code


def test_the_error_line_is_printed_before_the_exit(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        finish(failed=True, error="no sessions found")
    assert capsys.readouterr().err == "tsum: error: no sessions found\n"
    finish(error="")  # no error text: nothing printed
    assert capsys.readouterr().err == ""
