"""Deterministic probes: extraction (golden snapshots on samples/), normalization, recall rules."""

from __future__ import annotations

from pathlib import Path

import pytest
from syrupy.assertion import SnapshotAssertion

from transcript_tools.engine.messages import (
    INJECTED,
    AssistantMessage,
    TextBlock,
    ToolResultMessage,
    ToolUseBlock,
    UserMessage,
)
from transcript_tools.eval.artifacts import extract_text
from transcript_tools.eval.normalize import key_terms, normalize, squash
from transcript_tools.eval.probes import EXTRACTOR_VERSION, message_probes, request_probe
from transcript_tools.eval.score import ConversationProbes, language_of, recalled
from transcript_tools.formats import read_input
from transcript_tools.formats.source import Source

SAMPLES = Path(__file__).resolve().parents[2] / "samples"


def render_probes(path: Path) -> str:
    lines = [f"extractor_version {EXTRACTOR_VERSION}"]
    for conv in read_input(Source(str(path)), None):
        probes = ConversationProbes(conv.messages)
        for probe in probes.probes(0, len(conv.messages)):
            lines.append(f"{probe.kind}\tmessage {probe.message}\tturn {probe.turn}\t{probe.text}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    "name", sorted(p.name for p in SAMPLES.iterdir() if p.suffix in (".json", ".jsonl"))
)
def test_probes_drawn_from_samples(name: str, text_snapshot: SnapshotAssertion) -> None:
    assert render_probes(SAMPLES / name) == text_snapshot


def kinds(text: str, person: bool = False, tool: bool = False) -> list[tuple[str, str]]:
    return extract_text(text, person, tool)


def test_normalize_case_width_separators_and_cjk_spaces() -> None:
    assert normalize("Ｓｒｃ\\App\\Main.PY") == "src/app/main.py"
    assert normalize("  a \n\t b ") == "a b"
    assert squash(normalize("迁移到 ClickHouse 之后 每天 2 亿条")) == squash(
        normalize("迁移到ClickHouse之后每天2亿条")
    )
    cjk_probe = probe("number", "每天大概 2 亿条")
    assert recalled(cjk_probe, normalize("日增2亿条日志"))


def test_each_kind_is_extracted() -> None:
    text = (
        "See https://ci.acme.io/x and billing/rollup.py; `make_invoice()` failed with\n"
        "ValueError: bad month\nin v2.4.1, PR #412, commit 3f2a9c1, it took 6.02s"
    )
    found = dict((k, v) for k, v in kinds(text))
    assert found["url"] == "https://ci.acme.io/x"
    assert found["path"] == "billing/rollup.py"
    assert found["symbol"] == "make_invoice()"
    assert found["error"] == "ValueError: bad month"
    assert found["version"] == "v2.4.1"
    assert found["issue"] == "#412"
    assert found["commit"] == "3f2a9c1"
    assert found["number"] == "6.02s"


def test_commands_from_tool_calls_and_paths_from_arguments() -> None:
    message = AssistantMessage(
        (
            ToolUseBlock("c1", "bash", {"command": "pytest tests -q\necho done"}),
            ToolUseBlock("c2", "Read", {"file_path": "/repo/app.py"}),
            ToolUseBlock("c3", "editor", {"command": "str_replace", "path": "a.py"}),
            ToolUseBlock("c4", "bash", {"command": "cat > x.py << 'EOF'"}),
        )
    )
    found = [(p.kind, p.text) for p in message_probes(message, 3, 1, 500)]
    assert found == [("command", "pytest tests -q"), ("path", "/repo/app.py"), ("path", "a.py")]


def test_noise_rules() -> None:
    # R1 fenced code, R2 plain words in code spans, R12 an assistant's link lists
    assert (
        kinds("```python\nfoo_bar = 1\n```\nuse `data` and `keys`, see [docs](https://a.io/d)")
        == []
    )
    # R9 listings in tool output, R18 system paths, R20 diff blob ids
    listing = "a/x.py\na/y.py\na/z.py\na/w.py\n/nix/store/abc-x.py\nindex 83ff13feb..33dcdb278"
    assert kinds(listing, tool=True) == []
    # R11 a constraint is an instruction, not any sentence with "don't"
    assert kinds("I don't know what to cook.", person=True) == []
    assert kinds("Don't touch the migrations.", person=True) == [
        ("constraint", "Don't touch the migrations.")
    ]
    # R5 section numbers are not versions
    assert kinds("4.2.1 Tenant rights\nupgrade to 4.2.1 now") == [("version", "4.2.1")]


def test_errors_need_their_message_in_tool_output() -> None:
    assert kinds("from django.core.exceptions import FieldError", tool=True) == []
    assert kinds("Traceback ...\nKeyError: 'month'", tool=True) == [("error", "KeyError: 'month'")]


def test_injected_messages_are_not_probed_and_short_requests_are_skipped() -> None:
    injected = UserMessage((TextBlock("see src/app.py"),), origin=INJECTED)
    assert message_probes(injected, 0, 0, 500) == []
    assert request_probe(UserMessage.text("yes, go on"), 0, 0) is None
    assert request_probe(UserMessage.text("Fix the flaky rollup test"), 0, 0) is not None


IDE_WRAPPED = (
    "<ide_opened_file>The user opened the file /Users/dev/site/public/tokenizer.html in the "
    "IDE. This may or may not be related to the current task.</ide_opened_file> "
    "Fill in the readme"
)


def test_an_ides_context_is_no_part_of_the_request() -> None:
    # Q1: the boilerplate an IDE wraps around what the person typed held most of the key
    # terms, so any text quoting that boilerplate "recalled" the request.
    request = request_probe(UserMessage.text(IDE_WRAPPED), 0, 0)
    assert request is not None
    assert request.terms == ("fill", "readme")
    boilerplate = (
        "the user opened the file in the ide. this may or may not be related to the current task"
    )
    assert not recalled(request, normalize(boilerplate))
    assert recalled(request, normalize("the person asked us to fill in the README"))
    # the request is what was typed, not "nothing": a wrapper alone has no terms left
    only_context = IDE_WRAPPED.removesuffix(" Fill in the readme")
    assert request_probe(UserMessage.text(only_context), 0, 0) is None


def test_an_ides_tags_are_no_symbols_but_the_file_it_names_stays() -> None:
    # R26
    found = [(p.kind, p.text) for p in message_probes(UserMessage.text(IDE_WRAPPED), 0, 0, 500)]
    assert ("path", "/Users/dev/site/public/tokenizer.html") in found
    assert not any("ide_opened_file" in text for _, text in found)


def test_tool_results_are_probed_within_the_prompts_cut() -> None:
    result = ToolResultMessage("t1", "x" * 600 + " KeyError: 'late'")
    assert message_probes(result, 0, 0, 500) == []
    assert [p.text for p in message_probes(result, 0, 0, 700)] == ["KeyError: 'late'"]


def probe(kind: str, text: str):  # noqa: ANN201
    (found,) = [p for p in message_probes(UserMessage.text(text), 0, 0, 500) if p.kind == kind]
    return found


def test_recall_rules_per_kind() -> None:
    path = probe("path", "look at /srv/app/billing/rollup.py")
    assert recalled(path, normalize("fixed billing/rollup.py"))
    assert not recalled(path, normalize("fixed rollup.py"))
    error = probe("error", "it raised ValueError: invalid month value")
    assert recalled(error, normalize("a ValueError (invalid month)"))
    assert not recalled(error, normalize("a ValueError happened"))
    assert not recalled(error, normalize("invalid month value"))
    number = probe("number", "it took 250 ms")
    assert recalled(number, normalize("latency 250 MS"))
    request = request_probe(UserMessage.text("Migrate the nightly export job to ClickHouse"), 0, 0)
    assert request is not None
    assert recalled(request, normalize("the user wants the nightly export moved to clickhouse"))
    assert not recalled(request, normalize("nothing relevant here"))


def test_key_terms_cjk_and_ascii() -> None:
    assert key_terms(normalize("Please migrate the export job")) == ["migrate", "export"]
    assert "迁移" in key_terms(normalize("把日志迁移到ClickHouse"))


def test_language() -> None:
    assert language_of("我们团队要把用户行为日志从 MySQL 迁到 ClickHouse") == "cjk"
    assert language_of("The summary is in English") == "latin"
