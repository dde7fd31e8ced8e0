"""A pytest plugin: gate compaction in a project's own test suite (``pytest11`` entry point).

Installed with transcript-tools, pytest loads it by itself (with plug-in autoloading off:
``-p transcript_tools.pytest_plugin``). A test asks for the ``tsum`` fixture, replays or scores
its own logs and prompts, and asserts on what it cares about::

    import pytest

    @pytest.mark.tsum(prompt="prompts/handoff.j2", max_context_tokens=200_000)
    def test_handoff_prompt_keeps_the_paths(tsum):
        scores = tsum.eval("tests/transcripts/")
        assert tsum.recall(scores, "path") >= 0.9
        replay = tsum.replay("tests/transcripts/")
        assert tsum.schedule(replay)["session-1"] == [12, 30]
        assert tsum.summary_tokens(replay)[1] <= 4_000   # output tokens of every summary

The marker's keywords are the run's options for every call in the test: ``SummaryConfig``
fields (``max_context_tokens``, ``trigger_token_ratio``, ``debounce_turns``, ...) and the
library's keywords (``prompt``, ``provider``, ``model``, ``cache``, ``cache_only``,
``format``, ``dry_run``; ``prompts`` for eval, which scores ``prompt`` without it). A call's
own keywords come last; an unknown one (a typo) fails the test. The provider is the
offline one unless the marker or the call names another; the response cache defaults to
one file per test session (``tsum_cache``), so a prompt scored twice is paid for once.
Nothing here is imported until a test uses a fixture.
"""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .api import Paths
    from .eval.workflow import EvalRun
    from .replay.run import ReplayResult

MARKER = "tsum"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(**options): options of every tsum replay/eval the test runs through the "
        "`tsum` fixture (SummaryConfig fields, prompt, provider, model, cache, format...)",
    )


@pytest.fixture(scope="session")
def tsum_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One response cache for the test session (a real provider's responses, paid once)."""
    return tmp_path_factory.mktemp("tsum") / "cache.sqlite3"


@pytest.fixture
def tsum(request: pytest.FixtureRequest, tsum_cache: Path) -> Tsum:
    """Replay and score logs with the options of the test's ``tsum`` marker."""
    marker = request.node.get_closest_marker(MARKER)
    options = dict(marker.kwargs) if marker is not None else {}
    if marker is not None and marker.args:
        raise pytest.UsageError(f"@pytest.mark.{MARKER} takes keyword options only")
    return Tsum(options, tsum_cache)


def _keywords(*functions: Any) -> set[str]:
    """The keywords ``functions`` take (default: ``replay_corpus``'s and ``eval_corpus``'s),
    provider options included."""
    import inspect

    from .api import eval_corpus, replay_corpus
    from .providers.factory import ProviderOptions

    named = {
        name
        for function in functions or (replay_corpus, eval_corpus)
        for name, parameter in inspect.signature(function).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY or name == "config"
    }
    return named | set(ProviderOptions.__annotations__)


def _taken(merged: dict[str, Any], call: dict[str, Any], function: Any) -> dict[str, Any]:
    """Of the marker's options, those ``function`` takes (``dry_run`` is replay's, ``prompts``
    eval's); the call's own all reach it."""
    own = _keywords(function)
    return {k: v for k, v in merged.items() if k in own or k in call}


class Tsum:
    """What the ``tsum`` fixture gives a test: runs, and the figures tests assert on."""

    def __init__(self, options: dict[str, Any], cache: Path) -> None:
        self.options = options
        self.cache = cache

    def _call(self, extra: dict[str, Any]) -> dict[str, Any]:
        from .engine.config import SummaryConfig

        merged = {**self.options, **extra}
        names = {f.name for f in fields(SummaryConfig)}
        unknown = sorted(set(merged) - names - _keywords())
        if unknown:  # a typo would otherwise vanish into the provider options, unused
            raise TypeError(f"tsum: unknown option(s) {', '.join(unknown)} (marker or call)")
        summary = {k: merged.pop(k) for k in list(merged) if k in names}
        if summary:
            merged["config"] = SummaryConfig(**summary)
        if merged.get("provider", "offline") != "offline":
            merged.setdefault("cache", str(self.cache))  # offline writes nothing to cache
        return merged

    def replay(self, paths: Paths, **options: Any) -> ReplayResult:
        """``tsum replay`` of ``paths`` (``transcript_tools.replay_corpus``), sessions kept."""
        from .api import replay_corpus

        return replay_corpus(paths, **_taken(self._call(options), options, replay_corpus))

    def eval(self, paths: Paths, **options: Any) -> EvalRun:
        """``tsum eval`` of ``paths`` (``transcript_tools.eval_corpus``)."""
        from .api import eval_corpus

        merged = self._call(options)
        prompt = merged.pop("prompt", None)  # the marker's template: eval's one variant
        if prompt is not None:
            merged.setdefault("prompts", [prompt])
        return eval_corpus(paths, **_taken(merged, options, eval_corpus))

    @staticmethod
    def schedule(result: ReplayResult) -> dict[str, list[int]]:
        """Per session, the turns (units) where the checkpoint fired."""
        from .engine.records import unit_key
        from .engine.rules import FIRED

        out: dict[str, list[int]] = {}
        for session in result.sessions:
            engine = session.engine
            unit = unit_key(engine.settings.checkpoint)
            out[session.conversation.session_id] = [
                int(d[unit]) for d in engine.decisions if d["decision"] in FIRED
            ]
        return out

    @staticmethod
    def summary_tokens(result: ReplayResult) -> tuple[int, int]:
        """(input, output) tokens of every summary call of the run: what it costs."""
        tokens_in = tokens_out = 0
        for session in result.sessions:
            for summary in session.engine.summaries:
                usage = summary.get("usage") or {}
                tokens_in += int(usage.get("input_tokens", 0))
                tokens_out += int(usage.get("output_tokens", 0))
        return tokens_in, tokens_out

    @staticmethod
    def recall(scores: EvalRun, kind: str = "artifact", label: str | None = None) -> float:
        """The share of ``kind`` probes (artifact, path, command, request, ...) the
        summaries of ``label`` (default: the first template) carry; 0.0 when none was scored."""
        result = scores.result
        name = label if label is not None else result.labels[0]
        recall = result.aggregates[name].as_json()["recall"]["summary"].get(kind)
        return 0.0 if recall is None else float(recall)
