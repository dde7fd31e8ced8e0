"""The offline provider: a deterministic extractive summarizer (no network, no key).

It is not a language model. It takes the conversation's messages from the request
(or, given a prompt alone, reads the conversation back out of it: ``parse``) and
copies pieces of it into fixed sections (``facts``, ``render``): the user's requests, sentences
where the assistant states a decision or conclusion, the tools used, the identifiers
an agent needs verbatim (``idents``: files, commands, error lines, URLs, versions,
issue numbers, hashes, code spans), the errors seen and the latest state. Same prompt, same summary; no randomness, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from operator import itemgetter
from typing import Any

from ...engine.formatting import MESSAGE_SEPARATOR
from ...engine.messages import Usage
from ...engine.requests import SummaryRequest, SummaryResponse
from ...engine.tokens import estimate_text_tokens, text_counts, tokens_from_counts
from ...errors import ProviderConfigError
from ..registry import register
from .facts import LEVELS, PROSE_ROLES, Facts, language, letter_bounds
from .goals import previous_requests, requests
from .memo import FIELD_BITS, Memo, ScanMemo, packed, unpacked
from .parse import Blocks, blocks_from_messages, conversation_text, has_text, parse_text
from .render import cut_to_tokens, render_summary

ALGORITHM_VERSION = 5  # bump whenever the output for a given prompt changes (cache key)
# The summary's length: the most detailed level within a third of the conversation it is
# shown (its messages and tool calls' arguments; system messages aside: they stay in the
# view), never forced under 300 tokens, never over the request's max_tokens. A summary
# as long as the text it stands for is worth nothing (docs/eval.md "compression"); on a
# short conversation the fixed levels alone would make one.
SHARE_OF_SHOWN = 1 / 3
MIN_TARGET_TOKENS = 300


@register
class OfflineProvider:
    """Deterministic extractive summarizer: copies, never writes. No network, no key.

    Sections: goals and requests (every request while they fit, else the earliest, the
    latest, those that set a rule and the newest others; after the requests the previous
    summary listed when the template passes it, ``goals``),
    decisions and conclusions (assistant sentences with cue words such as
    decided / will / should / fixed / 决定 / 需要 / 已经), tools used with counts,
    identifiers copied verbatim (files and commands, also from the tool calls' arguments,
    which the formatted text never shows; error lines; URLs, versions, issue numbers,
    commit hashes, code spans; most frequent then most recent first), errors seen, and
    the current state (the latest assistant message). Chinese
    headings when CJK characters (Han, kana, Hangul) are more than 30% of the
    letters (CJK + A-Z) of the user and assistant text, English otherwise. The output
    is the most detailed level within a third of what it is shown (at least 300 tokens)
    and fits ``max_tokens`` by ``estimate_text_tokens``. Cost is linear in the prompt (regex and str methods,
    no per-character Python loop).
    """

    name = "offline"
    key_env: str | None = None
    DEFAULT_MODEL = "extractive-v1"

    def __init__(self) -> None:
        # What was found in each message's content, kept between requests: a session's
        # consecutive summaries show mostly the same messages (memo.py).
        self._memo = ScanMemo()

    @classmethod
    def create(
        cls,
        *,
        model: str | None,
        base_url: str | None,
        timeout: float,
        temperature: float | None,
        max_connections: int,
        require_key: bool,
    ) -> OfflineProvider:
        """The registry's constructor: refuses settings that mean nothing offline."""
        if base_url:
            raise ProviderConfigError(
                "--base-url applies to --provider openai or anthropic, not offline"
            )
        if model and model != cls.DEFAULT_MODEL:
            raise ProviderConfigError(
                f"the offline provider has one model ({cls.DEFAULT_MODEL}), not {model!r}; "
                "choose --provider anthropic or openai for other models"
            )
        if temperature is not None:
            raise ProviderConfigError(
                "the offline provider is deterministic: it takes no temperature"
            )
        return cls()

    @property
    def default_model(self) -> str:
        return self.DEFAULT_MODEL

    def identity(self, model: str | None) -> dict[str, Any]:
        return {
            "provider": self.name,
            "model": model or self.default_model,
            "algorithm_version": ALGORITHM_VERSION,
        }

    async def complete(self, prompt: str, model: str | None, max_tokens: int) -> SummaryResponse:
        """A summary of a rendered prompt alone: the conversation is read back out of it."""
        return self._response(prompt, summarize(prompt, max_tokens, self._memo), model)

    async def complete_request(self, request: SummaryRequest, model: str) -> SummaryResponse:
        """A summary of the request's messages when it carries them (the engine's
        requests do), else of its prompt."""
        if request.messages is None:
            return await self.complete(request.prompt, model, request.max_tokens)
        memo = self._memo
        # Every request keeps what it finds in the memo: a session's summaries a few
        # turns apart show mostly the same messages, and a sweep's configurations of a
        # conversation show its messages (the same objects) again. A request whose texts
        # never come back pays a few calls per text for keeping them.
        blocks = blocks_from_messages(
            request.messages,
            request.max_tool_result_chars,
            request.max_transcript_chars,
            None if request.formatted is None else (request.formatted, request.formatted_cut),
            memo.blocks,
            memo.variants,
        )
        measured = _measured(blocks, memo)
        carried = previous_requests(request.prompt)
        text, output_tokens = _summary(blocks, request.max_tokens, carried, memo, measured)
        input_tokens = None
        if request.formatted is not None:
            input_tokens = prompt_tokens(
                request.prompt,
                request.formatted,
                request.formatted_cut,
                memo.counts,
                None if measured is None else measured[1],
            )
        return self._response(request.prompt, text, model, input_tokens, output_tokens)

    def _response(
        self,
        prompt: str,
        text: str,
        model: str | None,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
    ) -> SummaryResponse:
        if input_tokens is None:
            input_tokens = estimate_text_tokens(prompt)
        if output_tokens is None:
            output_tokens = estimate_text_tokens(text)
        return SummaryResponse(
            text=text,
            model=model or self.default_model,
            usage=Usage(input_tokens=input_tokens, output_tokens=output_tokens),
        )


def prompt_tokens(
    prompt: str,
    blocks: Sequence[str],
    cut: bool,
    memo: Memo[str, int] | None = None,
    blocks_counts: int | None = None,
) -> int:
    """``estimate_text_tokens(prompt)``, for a prompt made from these formatted blocks.

    Class counts add up over the parts of a text: where the prompt holds the formatted
    conversation as is (a template showing ``{{ messages }}`` unchanged), the blocks'
    counts (kept packed in ``memo`` between requests, with the blocks' text as key) stand in
    for it, and only the template's own text is counted; otherwise the whole prompt.
    ``blocks_counts``: the sum of the blocks' packed counts, when the caller has it.
    """
    if not blocks:
        return estimate_text_tokens(prompt)
    conversation = blocks[0] if cut else MESSAGE_SEPARATOR.join(blocks)
    probe = conversation[:64]
    at = prompt.find(probe)
    while at != -1 and not prompt.startswith(conversation, at):
        at = prompt.find(probe, at + 1)
    if at == -1:
        return estimate_text_tokens(prompt)
    total = blocks_counts
    if total is None:
        total = sum((memo if memo is not None else Memo()).lookup_all(blocks, packed_counts))
    total += _cached_counts(prompt[:at]) + _cached_counts(prompt[at + len(conversation) :])
    if not cut:
        total += _SEPARATOR_COUNTS * (len(blocks) - 1)
    return tokens_from_counts(*unpacked(total, 5))


def packed_counts(text: str) -> int:
    """``tokens.text_counts(text)``, ``packed`` (memo.py: sums of them add up)."""
    return packed(text_counts(text))


_SEPARATOR_COUNTS = packed_counts(MESSAGE_SEPARATOR)


def summarize(prompt: str, max_tokens: int, memo: ScanMemo | None = None) -> str:
    """The extractive summary of a rendered prompt; ``""`` when it holds no conversation.

    The conversation is the text inside the last ``<messages>…</messages>`` pair, or
    else the prompt from the first line that starts with a role prefix (the text
    before it is the template's instructions). Blocks are split at a blank line
    followed by ``System: ``, ``User: ``, ``Assistant: ``, ``Tool Result [id]: `` or
    ``Tool Error [id]: ``; text before the first prefix (a message cut by the
    30,000-character limit) has no role and only feeds the language guess and the
    excerpt fallback.

    Known limits of reading text back: content holding a blank line followed by a
    role prefix (e.g. a pasted transcript) is split there, and a literal
    ``<messages>`` inside the conversation moves the start of the section. The
    engine's requests carry their messages, which avoids both (``complete_request``).
    """
    blocks = parse_text(conversation_text(prompt))
    return summarize_blocks(blocks, max_tokens, previous_requests(prompt), memo)


def summarize_blocks(
    blocks: Blocks,
    max_tokens: int,
    carried: list[str] | None = None,
    memo: ScanMemo | None = None,
) -> str:
    """The extractive summary of a conversation's blocks; ``""`` when none has text.

    ``carried``: the requests the session's previous summary listed (``goals``).
    ``memo``: what earlier calls found in the same contents (the same summary, faster)."""
    return _summary(blocks, max_tokens, carried, memo)[0]


def _summary(
    blocks: Blocks,
    max_tokens: int,
    carried: list[str] | None,
    memo: ScanMemo | None,
    measured: tuple[int, int] | None = None,
) -> tuple[str, int]:
    """``summarize_blocks`` and the summary's ``estimate_text_tokens`` (its usage's
    output tokens, estimated once). ``measured``: ``_measured(blocks, memo)``."""
    if not any(map(has_text, blocks.contents)):
        return "", 0
    shown, non_ascii, latin, prose_with_text = unpacked(measured[0] if measured else 0, 4)
    lang = language(blocks, memo, (non_ascii, latin) if prose_with_text else None)
    facts = Facts.collect(blocks, memo)
    facts.requests = requests(facts.requests, carried or [])
    if measured is None:
        shown = _shown_tokens(blocks, memo)
    target = min(max_tokens, max(MIN_TARGET_TOKENS, int(shown * SHARE_OF_SHOWN)))
    text, tokens = "", 0
    for level in LEVELS:
        text = render_summary(facts, lang, level)
        tokens = estimate_text_tokens(text)
        if tokens <= target:
            return text, tokens
    if tokens > max_tokens:
        text = cut_to_tokens(text, max_tokens)
        tokens = estimate_text_tokens(text)
    return text, tokens


_PROSE = frozenset(PROSE_ROLES)
_MEASURED, _FIRST, _SECOND = itemgetter(3), itemgetter(0), itemgetter(1)


def _measured(blocks: Blocks, memo: ScanMemo) -> tuple[int, int] | None:
    """What ``_shown_tokens``, ``language`` and ``prompt_tokens`` sum over the blocks,
    from their memo entries (measured once per message): the packed (shown tokens,
    non-ASCII characters and ASCII letters of the prose (``facts.letter_bounds``), prose
    blocks with text) and the packed class counts of the formatted texts. None for
    blocks without entries.

    The last block may not be its message's: its content without its trailing newlines,
    or a cut newest message (the only block then: a fragment, without its tool calls).
    It is measured apart when it differs."""
    entries = blocks.entries
    if entries is None:
        return None
    measured = list(map(_MEASURED, entries))  # the passes over the blocks in C
    if None in measured:
        for index in [i for i, found in enumerate(measured) if found is None]:
            entry = entries[index]
            if entry[3] is None:
                entry[3] = _measure_once(entry[1], entry[2], memo)
            measured[index] = entry[3]
    measures = sum(map(_FIRST, measured))
    counts = sum(map(_SECOND, measured))
    last = len(entries) - 1
    role, _, content, _ = entries[last][2]
    if role != blocks.roles[last] or content is not blocks.contents[last]:
        values = [value for index, _, value in blocks.tool_args if index == last]
        measures -= measured[last][0]
        measures += _block_measures(blocks.roles[last], blocks.contents[last], values, memo)
    return measures, counts


def _measure_once(text: str, block: Any, memo: ScanMemo) -> tuple[int, int]:
    """A memo entry's share of ``_measured``'s sums: (``_block_measures`` of its block,
    the packed class counts of its formatted ``text``, which ends with the block's
    content). What the memo lacks of the content's tokens, (prose) letter bounds and the
    text's counts comes from one count of the content: the estimate and the bounds are
    made of the counts, and a text's counts are the sums of its parts'
    (``tokens.text_counts``); the role prefix before the content is one of few."""
    role, _, content, arguments = block
    prose = role in _PROSE
    counts = memo.counts.get(text)
    tokens = memo.tokens.get(content)
    bounds = memo.bounds.get(content) if prose else 0
    if counts is None or tokens is None or bounds is None:
        of_content = text_counts(content)
        if tokens is None:
            tokens = tokens_from_counts(*of_content)
            memo.tokens.put(content, tokens)
        if bounds is None:
            bounds = letter_bounds(content, of_content)
            memo.bounds.put(content, bounds)
        if counts is None:
            counts = _cached_counts(text[: len(text) - len(content)]) + packed(of_content)
            memo.counts.put(text, counts)
    values = [value for _, value in arguments]
    return _block_measures(role, content, values, memo, (tokens, bounds)), counts


# Texts that recur across requests: the role prefixes ("Assistant: ", "Tool Result
# [call_7]: "), and a template's text before and after the conversation.
@lru_cache(maxsize=1024)
def _cached_counts(text: str) -> int:
    return packed_counts(text)


def _block_measures(
    role: str,
    content: str,
    arguments: list[str],
    memo: ScanMemo,
    known: tuple[int, int] | None = None,
) -> int:
    """One block's share of ``_measured``'s first sum. ``known``: the content's
    ``estimate_text_tokens`` and ``letter_bounds`` (0 unless a prose role), when the
    caller has them."""
    tokens = memo.tokens
    shown = sum([tokens.lookup(value, estimate_text_tokens) for value in arguments])
    if role == "system":
        return shown
    shown += tokens.lookup(content, estimate_text_tokens) if known is None else known[0]
    if role not in _PROSE:
        return shown
    bounds = memo.bounds.lookup(content, letter_bounds) if known is None else known[1]
    return shown | bounds << FIELD_BITS | int(has_text(content)) << (3 * FIELD_BITS)


def _shown_tokens(blocks: Blocks, memo: ScanMemo | None) -> int:
    """The tokens of what the summary stands for: the messages (system messages aside:
    they stay in the view) and the tool calls' arguments, each text estimated alone."""
    texts = [c for r, c in zip(blocks.roles, blocks.contents, strict=True) if r != "system"]
    texts += [value for _, _, value in blocks.tool_args]
    if memo is None:
        return sum(map(estimate_text_tokens, texts))
    return sum(memo.tokens.lookup_all(texts, estimate_text_tokens))
