"""UNIGINE's compact integers (readInt2/writeInt2) and the strings built on them.

Sign-magnitude, least significant group first, 1 to 5 bytes: the first byte
holds a continue bit (7), a sign bit (6) and magnitude bits 0-5; each later
byte a continue bit and the next 7 magnitude bits. Writers emit the shortest
form, so a longer form (or a negative zero) is rejected: it would not
round-trip and no real file uses it.
"""
from __future__ import annotations

from ...binary import Reader, Writer
from ...errors import UnsupportedFeature

MAX_BYTES = 5


def read_int(r: Reader, what: str = "compact int") -> int:
    start = r.pos
    b = r.u8()
    negative = bool(b & 0x40)
    magnitude = b & 0x3F
    shift, n = 6, 1
    while b & 0x80:
        if n == MAX_BYTES:
            r.fail(f"{what}: compact int continues into a sixth byte", offset=start)
        b = r.u8()
        magnitude |= (b & 0x7F) << shift
        shift += 7
        n += 1
    if n > 1 and (b & 0x7F) == 0:
        r.fail(f"{what}: compact int is not in its shortest form", offset=start)
    if negative and magnitude == 0:
        r.fail(f"{what}: compact int is a negative zero", offset=start)
    return -magnitude if negative else magnitude


def read_count(r: Reader, item_size: int, what: str) -> int:
    """A compact int used as a count: never negative, and the items must fit."""
    start = r.pos
    n = read_int(r, what)
    if n < 0:
        r.fail(f"{what}: negative count {n}", offset=start)
    if n * item_size > r.remaining:
        r.fail(f"{what}: count {n} x {item_size} bytes exceeds the {r.remaining} bytes left", offset=start)
    return n


def encode_int(value: int) -> bytes:
    magnitude = abs(int(value))
    if magnitude >= 1 << (6 + 7 * (MAX_BYTES - 1)):
        raise UnsupportedFeature(f"{value} does not fit a compact int: too many items for the format")
    first = (magnitude & 0x3F) | (0x40 if value < 0 else 0)
    magnitude >>= 6
    out = bytearray([first | (0x80 if magnitude else 0)])
    while magnitude:
        b = magnitude & 0x7F
        magnitude >>= 7
        out.append(b | (0x80 if magnitude else 0))
    return bytes(out)


def write_int(w: Writer, value: int) -> None:
    w.bytes(encode_int(value))


# Names are kept as text; surrogateescape keeps any byte sequence exact.
def read_string(r: Reader, what: str = "name") -> str:
    start = r.pos
    n = read_count(r, 1, f"{what} length")
    if n == 0:
        r.fail(f"{what}: length 0 leaves no room for the terminating NUL", offset=start)
    raw = r.bytes(n)
    if raw[-1] != 0:
        r.fail(f"{what}: string of {n} bytes does not end with NUL", offset=r.pos - 1)
    if 0 in raw[:-1]:
        r.fail(f"{what}: string holds a NUL before its end", offset=start)
    return raw[:-1].decode("utf-8", "surrogateescape")


def write_string(w: Writer, text: str) -> None:
    raw = text.encode("utf-8", "surrogateescape") + b"\0"
    write_int(w, len(raw))
    w.bytes(raw)
