"""The sweep's per-grid shortcuts give what the work they skip would give: each is
compared with the uncached path it stands in for (docs/performance.md, "The policy grid")."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from transcript_tools.engine.config import ReplaySettings, SummaryConfig, TurnPath
from transcript_tools.engine.messages import Conversation, UserMessage
from transcript_tools.engine.policy_engine import with_policy
from transcript_tools.engine.policy_toml import preset, preset_names
from transcript_tools.engine.prompt import load_template
from transcript_tools.engine.session import SessionEngine
from transcript_tools.sweep.config import SweepConfig
from transcript_tools.sweep.engine_path import engine_for


def _uncached_engine(
    conv: Conversation, cfg: SweepConfig, base: SummaryConfig, keep: int, path: TurnPath
) -> SessionEngine:
    """The engine as built before the settings were made once per configuration."""
    template = load_template(None)
    built = ReplaySettings(
        summary=cfg.summary_config(base),
        mode=cfg.mode,
        keep_recent_turns=keep,
        path=path,
        measure=cfg.measure,
        template_name=template.name,
        checkpoint=cfg.checkpoint,
    )
    built = with_policy(built, cfg.policy)
    return SessionEngine(
        conv.session_id, built, template=template if built.policy is None else None
    )


@settings(max_examples=60, deadline=None)
@given(
    st.sampled_from(preset_names()),
    st.lists(st.integers(1000, 400_000), min_size=1, max_size=3),
    st.integers(1, 5),
    st.sampled_from(list(TurnPath)),
)
def test_engine_settings_made_once_equal_those_made_per_conversation(
    name: str, windows: list[int], keep: int, path: TurnPath
) -> None:
    """Every configuration at every window, asked in any order and more than once: the
    engine's settings, policy and template are those built afresh."""
    conv = Conversation("s", "s.jsonl", "test", [UserMessage.text("hi")])
    base = SummaryConfig()
    policy = preset(name)
    for window in [*windows, *reversed(windows)]:
        cfg = SweepConfig(
            policy.trigger.ratio,
            window,
            policy.trigger.debounce,
            measure=policy.trigger.measure.engine,
            checkpoint=policy.trigger.unit,
            policy=policy,
        )
        cfg = replace(cfg, policy=policy if name != "seed" else None)
        engine = engine_for(conv, cfg, base, load_template(None), keep, "offline", path)
        fresh = _uncached_engine(conv, cfg, base, keep, path)
        assert engine.settings == fresh.settings
        assert engine.policy == fresh.policy
        assert engine.template == fresh.template
        assert engine._line == fresh._line
