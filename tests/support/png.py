"""A PNG reader for screenshot tests, stdlib only (zlib): 8-bit RGB or RGBA, not interlaced,
which is what headless chromium writes."""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _unfilter(kind: int, line: bytearray, prior: bytes | bytearray, bpp: int) -> None:
    """Undo one scanline's filter in place (PNG spec, section 9.2)."""
    n = len(line)
    if kind == 0:
        return
    if kind == 1:  # Sub
        for i in range(bpp, n):
            line[i] = (line[i] + line[i - bpp]) & 0xFF
    elif kind == 2:  # Up
        for i in range(n):
            line[i] = (line[i] + prior[i]) & 0xFF
    elif kind == 3:  # Average
        for i in range(n):
            left = line[i - bpp] if i >= bpp else 0
            line[i] = (line[i] + ((left + prior[i]) >> 1)) & 0xFF
    elif kind == 4:  # Paeth
        for i in range(n):
            a = line[i - bpp] if i >= bpp else 0
            b = prior[i]
            c = prior[i - bpp] if i >= bpp else 0
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
    else:
        raise ValueError(f"PNG: unknown filter type {kind}")


def read_png(path: Path) -> tuple[int, list[bytearray]]:
    """The bytes per pixel (3: RGB, 4: RGBA) and the image's rows of unfiltered bytes."""
    data = path.read_bytes()
    if not data.startswith(SIGNATURE):
        raise ValueError(f"{path}: not a PNG file")
    at, idat = len(SIGNATURE), bytearray()
    width = height = channels = 0
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        at += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace:
                raise ValueError(f"{path}: only 8-bit RGB/RGBA, non-interlaced PNG is read")
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(bytes(idat))
    stride = width * channels
    rows: list[bytearray] = []
    prior: bytes | bytearray = bytes(stride)
    for y in range(height):
        start = y * (stride + 1)
        line = bytearray(raw[start + 1 : start + 1 + stride])
        _unfilter(raw[start], line, prior, channels)
        rows.append(line)
        prior = line
    return channels, rows


def pixels_of(image: tuple[int, list[bytearray]], colour: str) -> list[tuple[int, int]]:
    """(x, y) of every pixel painted exactly ``colour`` (``#rrggbb``; alpha ignored)."""
    channels, rows = image
    needle = bytes.fromhex(colour.removeprefix("#"))
    found: list[tuple[int, int]] = []
    for y, line in enumerate(rows):
        at = line.find(needle)
        while at != -1:
            if at % channels == 0:  # a pixel's start, not bytes straddling two pixels
                found.append((at // channels, y))
            at = line.find(needle, at + 1)
    return found
