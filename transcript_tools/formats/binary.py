"""What a binary file is, from its first bytes, so an input that is not text is named.

A SQLite database, a gzip archive or an image handed to tsum used to fail with "invalid
UTF-8 on this line" at some line number of its bytes. ``kind`` names it instead from its
magic number (the file signatures are the formats' own: SQLite's "SQLite format 3\\0"
header, RFC 1952 for gzip, the PNG / JPEG / GIF / WebP / PDF / ZIP signatures …). A
SQLite database goes on to the database readers (``opencode/database.py``); every other
binary is an error naming what it is, or a warning when a directory walk found it.
"""

from __future__ import annotations

from ..errors import UnknownFormatError

SQLITE = "SQLite database"
ZIP = "ZIP archive"  # an inspect_ai .eval log is one (formats/inspect_ai_log.py)

# (signature, offset, what it is, a hint for reading it) — the longest prefixes first
_SIGNATURES: tuple[tuple[bytes, int, str, str], ...] = (
    (b"SQLite format 3\x00", 0, SQLITE, ""),
    (b"\x1f\x8b", 0, "gzip archive", "decompress it first (gunzip)"),
    (b"\x89PNG\r\n\x1a\n", 0, "PNG image", ""),
    (b"\xff\xd8\xff", 0, "JPEG image", ""),
    (b"GIF87a", 0, "GIF image", ""),
    (b"GIF89a", 0, "GIF image", ""),
    (b"WEBP", 8, "WebP image", ""),
    (b"%PDF-", 0, "PDF document", ""),
    (b"PK\x03\x04", 0, ZIP, "extract it first (unzip)"),
    (b"\x28\xb5\x2f\xfd", 0, "zstd archive", "decompress it first (zstd -d)"),
    (b"BZh", 0, "bzip2 archive", "decompress it first (bunzip2)"),
    (b"\xfd7zXZ\x00", 0, "xz archive", "decompress it first (unxz)"),
    (b"\x7fELF", 0, "ELF executable", ""),
)
SNIFF_BYTES = 4096  # what kind() looks at


class BinaryFileError(UnknownFormatError):
    """A binary file no reader reads (an image, an archive, a database of another program)."""


def kind(data: bytes) -> tuple[str, str] | None:
    """``(what the file is, how to read it)`` for a binary file, or None for text.

    Known signatures first; then any NUL byte in the first 4 KiB of bytes that are not
    UTF-8 text (JSON and the plain-text logs never hold a raw NUL) is "binary data"."""
    for signature, offset, what, hint in _SIGNATURES:
        if data[offset : offset + len(signature)] == signature:
            if what == "WebP image" and data[:4] != b"RIFF":
                continue
            return what, hint
    head = data[:SNIFF_BYTES]
    if b"\x00" in head:
        try:
            head.decode("utf-16" if head[:2] in (b"\xff\xfe", b"\xfe\xff") else "utf-8")
        except UnicodeDecodeError:
            return "binary data", ""
        if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
            return "UTF-16 text", "convert it to UTF-8 first (iconv -f UTF-16 -t UTF-8)"
    return None


def describe(what: str, hint: str) -> str:
    """The message for a binary file that is not a transcript."""
    if what.endswith(("text", "data")):
        named = what
    else:
        named = ("an " if what[:1] in "AEIOU" else "a ") + what
    return f"{named}, not a transcript" + (f"; {hint}" if hint else "")
