"""Turning a file into a stream of JSON records, with located errors.

A *record* is one JSON object: a JSONL line, the single object of a whole-file
``.json``, or one element of a whole-file JSON array. Every reader consumes
records, so one reader handles "JSONL", "one object per file" and "JSON array"
variants of its format alike.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from ..engine.messages import Conversation
from ..errors import InputError
from .bounds import max_record_bytes, read_local, record_too_large

WHOLE_FILE_SUFFIXES = (".json", ".traj")
UTF8_BOM = b"\xef\xbb\xbf"
SKIP_HINT = "--skip-bad-lines skips it"


@dataclass(slots=True)
class Record:
    obj: dict[str, Any]
    line: int | None = None  # 1-based JSONL line
    item: int | None = None  # 0-based element of a JSON array

    def error(self, path: str, message: str) -> InputError:
        return InputError(path, self.line, message, item=self.item)


@dataclass(slots=True)
class Source:
    """A file being read, plus how bad lines are treated."""

    path: str
    skip_bad_lines: bool = False
    warn: Callable[[str], None] = field(default=lambda msg: print(msg, file=sys.stderr))
    display: str = ""  # how the path is shown in messages (as the user typed it)
    # Which other format would take a record, if any (set by formats.read_conversations
    # for the reader it runs: a file may switch format part way, formats/switch.py).
    other_format: Callable[[Record], str | None] | None = None

    def __post_init__(self) -> None:
        if not self.display:
            self.display = self.path

    def bad(self, err: InputError) -> None:
        """A bad record: fatal for this file, or a warning with --skip-bad-lines."""
        if not self.skip_bad_lines:
            raise InputError(err.path, err.line, f"{err.message} ({SKIP_HINT})", item=err.item)
        self.warn(f"warning: {err.location_text()} (skipped)")

    def bad_line(self, line: int | None, message: str, item: int | None = None) -> None:
        """``bad`` for a line (or array item) of this file."""
        self.bad(InputError(self.display, line, message, item=item))

    def bad_record(self, record: Record, message: str) -> None:
        """``bad`` for a record of this file that is not what its reader takes."""
        self.bad_line(record.line, message, record.item)

    def noted(self, what: str, line: int | None = None) -> None:
        """A warning about this file (at ``line``, where given)."""
        self.warn(f"warning: {self.display}{'' if line is None else f':{line}'}: {what}")

    def dropped(self, record: Record, what: str) -> None:
        """A record (or a field of one) tsum reads past: always a warning naming its line."""
        self.warn(f"warning: {record.error(self.display, what).location_text()}")

    def warner(self, record: Record) -> Callable[[str], None]:
        """``dropped`` for one record, for helpers that do not know where they are."""
        return lambda what: self.dropped(record, what)


Warn = Callable[[str], None]


# No model call is sent or writes more tokens than this: today's largest context windows
# are 1-10 million tokens, so a count beyond 100 million (10x the largest, 1,000x the usual)
# is a broken or hostile log, not usage. Such a count, or a negative one, is ignored.
MAX_TOKENS_PER_CALL = 100_000_000


def count_field(value: Any, name: str, warn: Warn | None = None) -> int:
    """A token count: a number; a numeric string is read with a warning (some exporters
    write ``"1234"``), anything else is 0 with a warning. Missing (None) is 0, silently.
    A count that cannot be true (negative, or above ``MAX_TOKENS_PER_CALL``) is 0 with a
    warning too."""
    if type(value) is int and 0 <= value <= MAX_TOKENS_PER_CALL:  # the common case first
        return value
    if value is None:
        return 0
    number: int | None = None
    if isinstance(value, bool):
        pass
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value == value and abs(value) != float("inf"):
        number = int(value)
    elif isinstance(value, str):
        try:
            number = int(value.strip())
        except ValueError:
            pass
        else:
            if warn is not None and 0 <= number <= MAX_TOKENS_PER_CALL:
                warn(f"{name} is a string ({value!r}); read as {number}")
    if number is not None and not 0 <= number <= MAX_TOKENS_PER_CALL:
        if warn is not None:
            shown = str(value) if len(str(value)) <= 24 else f"{str(value)[:20]}…"
            why = "negative" if number < 0 else f"more than {MAX_TOKENS_PER_CALL:,} in one call"
            warn(f"{name} is {shown}, which cannot be true ({why}); ignored")
        return 0
    if number is not None:
        return number
    if warn is not None:
        warn(f"{name} is not a number ({value!r}); ignored")
    return 0


def _describe_json_error(exc: orjson.JSONDecodeError) -> str:
    msg = str(exc).split(":", 1)[0]
    return f"invalid JSON ({msg.lower()} at column {getattr(exc, 'colno', '?')})"


def _type_name(value: Any) -> str:
    return {list: "array", str: "string", int: "number", float: "number", bool: "boolean"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


# Files whose bytes a distributed reader already fetched (Ray Data reads s3://... itself),
# by the path they were read from: read_bytes serves these instead (parallel.py).
PREFETCHED_BYTES: dict[str, bytes] = {}


def read_sibling(path: str) -> bytes | None:
    """The bytes of a file beside an input (a Cline task folder's other file), or None where
    there is none; ``path`` may be local or a URL Ray Data reads (``file://``, ``s3://``…),
    so a folder read from a URL pairs its files as a local walk does."""
    fetched = PREFETCHED_BYTES.get(path)
    if fetched is not None:
        return fetched
    if "://" not in path:
        local = Path(path)
        return local.read_bytes() if local.is_file() else None
    from pyarrow import fs  # a URL input runs under --ray, which brings pyarrow

    try:
        filesystem, inner = fs.FileSystem.from_uri(path)
        if filesystem.get_file_info(inner).type != fs.FileType.File:
            return None
        with filesystem.open_input_stream(inner) as stream:
            return bytes(stream.read())
    except (OSError, ValueError):
        return None


def list_siblings(folder: str) -> list[str]:
    """The names of the entries of a folder beside an input (OpenCode's storage keeps a
    session's messages and parts in folders next to it), sorted, hidden ones left out; []
    where there is none. Local or a URL, as ``read_sibling``."""
    if "://" not in folder:
        local = Path(folder)
        names = [p.name for p in local.iterdir()] if local.is_dir() else []
    else:
        from pyarrow import fs  # a URL input runs under --ray, which brings pyarrow

        try:
            filesystem, inner = fs.FileSystem.from_uri(folder)
            infos = filesystem.get_file_info(fs.FileSelector(inner, allow_not_found=True))
        except (OSError, ValueError):
            return []
        names = [info.base_name for info in infos]
    return sorted(n for n in names if not n.startswith("."))


def read_bytes(path: str) -> bytes:
    fetched = PREFETCHED_BYTES.get(path)
    if fetched is not None:
        return fetched
    try:
        return read_local(path)  # bounded where the input may never end (formats/bounds.py)
    except FileNotFoundError:
        raise InputError(path, None, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, None, "is a directory") from None
    except OSError as exc:
        raise InputError(path, None, f"cannot read ({exc.strerror})") from None


def is_whole_file_json(path: str, data: bytes) -> bool:
    """``.json``/``.traj`` files, and anything whose first line alone is not a complete value."""
    if path.endswith(WHOLE_FILE_SUFFIXES):
        return True
    stripped = data.lstrip()
    if stripped[:1] == b"[":
        return True
    first = stripped.split(b"\n", 1)[0]
    return stripped[:1] == b"{" and first.strip() in (b"{", b"{\r")  # pretty-printed object


def iter_records(source: Source, data: bytes) -> Iterator[Record]:
    """Yield the records of a file's bytes; bad ones raise (or warn, with --skip-bad-lines)."""
    path = source.display
    if data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM) :]  # written by some Windows editors and tools; not content
    if not data.strip():
        raise InputError(path, None, "empty file (no JSON records)")
    if is_whole_file_json(source.path, data):
        yield from _iter_whole_file(source, data)
    else:
        yield from _iter_lines(source, data)


def _iter_whole_file(source: Source, data: bytes) -> Iterator[Record]:
    path = source.display
    if len(data) > (limit := max_record_bytes()):  # one document: parsed as one record
        raise record_too_large(path, None, limit)
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        first = data.lstrip().split(b"\n", 1)[0]
        if not source.path.endswith(WHOLE_FILE_SUFFIXES) and _parses(first):
            # Not one document after all: a JSONL file whose first line is an array
            # (or similar). Report its lines one by one, each at its own number.
            yield from _iter_lines(source, data)
            return
        if _is_invalid_utf8(data):
            yield from _iter_whole_file(source, _replace_bad_utf8(source, data))
            return
        raise InputError(path, getattr(exc, "lineno", None), _describe_json_error(exc)) from None
    if isinstance(value, dict):
        yield Record(value)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, dict):
                yield Record(item, item=i)
            else:
                source.bad_line(None, f"expected a JSON object, got {_type_name(item)}", i)
    else:
        raise InputError(path, None, f"expected a JSON object or array, got {_type_name(value)}")


def _replace_bad_utf8(source: Source, data: bytes) -> bytes:
    """A whole-file JSON document with invalid UTF-8: each bad line is a bad line
    (``Source.bad``); with --skip-bad-lines its bad bytes read as U+FFFD (the document
    cannot lose a line and stay JSON)."""
    lines = data.split(b"\n")
    for lineno, raw in enumerate(lines, 1):
        if _is_invalid_utf8(raw):
            err = InputError(source.display, lineno, "invalid UTF-8 on this line")
            if not source.skip_bad_lines:
                source.bad(err)  # raises
            source.warn(f"warning: {err.location_text()}; its bad bytes read as U+FFFD")
            lines[lineno - 1] = raw.decode("utf-8", "replace").encode()
    return b"\n".join(lines)


def _parses(raw: bytes) -> bool:
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    return True


def _is_invalid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


def _iter_lines(source: Source, data: bytes) -> Iterator[Record]:
    # Hot path: one orjson.loads per line, lines cut out one at a time (no list of
    # every line: that would be a second copy of the file). Blank lines and bad
    # lines take the slow path, in the except clause.
    loads = orjson.loads
    decode_error = orjson.JSONDecodeError
    find = data.find
    size = len(data)
    limit = max_record_bytes()
    pos = 0
    lineno = 0
    while pos < size:
        end = find(b"\n", pos)
        if end == -1:
            end = size
        if end - pos > limit:  # refused before parsing: about 4x its size in memory
            source.bad(record_too_large(source.display, lineno + 1, limit))
            pos = end + 1
            lineno += 1
            continue
        raw = data[pos:end]
        pos = end + 1
        lineno += 1
        try:
            obj = loads(raw)
        except decode_error as exc:
            if not raw.strip():
                continue
            _bad_line(source, data, raw, lineno, end, exc)
            continue
        if type(obj) is not dict:  # orjson makes no dict subclass
            source.bad_line(lineno, f"expected a JSON object, got {_type_name(obj)}")
            continue
        yield Record(obj, lineno)


def _bad_line(
    source: Source, data: bytes, raw: bytes, lineno: int, end: int, exc: orjson.JSONDecodeError
) -> None:
    if not data.endswith(b"\n") and (
        end >= len(data) or (b"\n" not in data[end + 1 :] and not data[end + 1 :].strip())
    ):
        # Claude Code and Codex append to their logs while they run: an incomplete last
        # line is the normal state of a live log, not a broken file (checked before
        # UTF-8, since the cut can fall inside a character).
        source.noted(
            "truncated last line skipped (the writer may still be running, or stopped mid-line)",
            lineno,
        )
    elif _is_invalid_utf8(raw):
        source.bad_line(lineno, "invalid UTF-8 on this line")
    else:
        source.bad_line(lineno, _describe_json_error(exc))


def session_stem(source: Source) -> str:
    """Default session id of a file: its name without transcript suffixes."""
    if source.path == "-":
        return "stdin"
    name = Path(source.display).name
    for suffix in (".traj.json", ".jsonl", ".json", ".traj"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return Path(name).stem


ID_KEYS = ("id", "session_id", "instance_id", "conversation_id")


def conversation_id(
    obj: dict[str, Any], source: Source, index: int, record: Record, keys: tuple[str, ...] = ID_KEYS
) -> str:
    """The id a conversation record names itself by, else the file's stem.

    A file that is a list of conversations (JSONL lines, a JSON array) numbers them
    ``stem#1``, ``stem#2``… — always, so an id never depends on whether more follow.
    """
    for key in keys:
        value = obj.get(key)
        if isinstance(value, (str, int)) and not isinstance(value, bool) and value != "":
            return str(value)
    stem = session_stem(source)
    return f"{stem}#{index}" if record.line is not None or record.item is not None else stem


def record_conversation(
    name: str, source: Source, record: Record, index: int, keys: tuple[str, ...] = ID_KEYS
) -> Conversation:
    """A conversation of format ``name`` that one record holds, named as ``conversation_id``."""
    session_id = conversation_id(record.obj, source, index, record, keys)
    return Conversation(session_id, source.display, name, line=record.line)


# ---- plain-text transcripts (Aider's logs are not JSON) ---------------------------------


def decode_text(source: Source, data: bytes) -> str:
    """A plain-text transcript's bytes as text, for readers of non-JSON formats.

    Kept apart from the JSON record path: those readers parse lines themselves. A UTF-8
    byte-order mark is dropped; a line of invalid UTF-8 is a bad line (``Source.bad``): an
    error naming it, or with --skip-bad-lines a warning, the line read as empty (so the
    lines after it keep their numbers).
    """
    if data.startswith(UTF8_BOM):
        data = data[len(UTF8_BOM) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        first = data.count(b"\n", 0, exc.start) + 1
    lines = data.split(b"\n")
    out = [raw.decode("utf-8", "replace") for raw in lines[: first - 1]]  # valid up to here
    for lineno, raw in enumerate(lines[first - 1 :], first):
        try:
            out.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            source.bad_line(lineno, "invalid UTF-8 on this line")
            out.append("")
    return "\n".join(out)
