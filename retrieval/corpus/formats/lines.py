"""What every parser shares: a file's text read a piece at a time (memory: one piece, whatever the file's size), its
lines numbered as `str.splitlines` numbers them, and the checks of a record's id and text, each error naming the file
and line."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from ...core.errors import InputError
from ..limits import MAX_TEXT_CHARS


def _decode(data: bytes, source: str) -> str:
    """Bytes as UTF-8 text (a BOM is accepted), or an error naming the file."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise InputError(f"{source}:{line}: not UTF-8 text ({e.reason})") from None


Data = bytes | bytearray | Iterable[bytes]  # a file's bytes whole, or its chunks as they are read (a zip member)
_PIECE = 2**20  # the bytes decoded at once by `text_pieces`: what reading a file line by line holds


def _newline_pieces(data: Data) -> Iterator[bytes | memoryview]:
    """The bytes in pieces of about _PIECE that each end just after a newline (the last one perhaps not): a line
    is never cut (a longer line is one piece of its own)."""
    if isinstance(data, (bytes, bytearray)):
        view, pos, size = memoryview(data), 0, len(data)
        while pos < size:
            end = data.rfind(b"\n", pos, pos + _PIECE) + 1 if pos + _PIECE < size else size
            if end <= pos:  # no newline in the next _PIECE bytes: up to the one after
                end = data.find(b"\n", pos + _PIECE) + 1 or size
            yield view[pos:end]
            pos = end
        return
    carry = bytearray()
    for chunk in data:
        carry += chunk
        if len(carry) >= _PIECE and (cut := carry.rfind(b"\n") + 1):
            yield bytes(carry[:cut])
            del carry[:cut]
    if carry:
        yield bytes(carry)


def text_pieces(data: Data, source: str) -> Iterator[str]:
    """The text of `data` decoded a piece at a time (UTF-8, a BOM accepted), each piece whole lines; memory: one
    piece, whatever the file's size. A byte that is not UTF-8 is an error naming its line, as `_decode` names it."""
    newlines = 0
    for piece in _newline_pieces(data):
        if newlines == 0 and piece[:3] == b"\xef\xbb\xbf":  # a BOM (a first piece without newline holds no other)
            piece = piece[3:]
        try:
            text = str(piece, "utf-8")
        except UnicodeDecodeError as e:
            at = newlines + bytes(piece[: e.start]).count(b"\n") + 1
            raise InputError(f"{source}:{at}: not UTF-8 text ({e.reason})") from None
        yield text
        newlines += text.count("\n")


def text_lines(data: Data, source: str) -> Iterator[tuple[int, str]]:
    """(number, line) of a file's lines read a piece at a time, split and numbered as `str.splitlines` of its whole
    text would: the lines that can hold something (a piece of blank lines only is counted and passed over in C, so
    a file of a billion newlines costs what its pieces do). Memory: one piece."""
    first = 1
    for text in text_pieces(data, source):
        lines = text.splitlines()
        if not text.isspace():
            yield from enumerate(lines, first)
        first += len(lines)


def _short(value: str, width: int = 40) -> str:
    """A field for a message, cut when long."""
    return repr(value if len(value) <= width else value[:width] + "...")


def _joined(title: str, text: str, source: str, line: int) -> str:
    """Title and text joined by a space, or an error when longer than MAX_TEXT_CHARS."""
    out = f"{title} {text}".strip() if title else text
    if len(out) > MAX_TEXT_CHARS:
        raise InputError(
            f"{source}:{line}: the text has {len(out):,} characters, more than the limit of {MAX_TEXT_CHARS:,}"
        )
    return out


def _check_id(rid: str, source: str, line: int) -> None:
    """An error when an id holds whitespace: it could never be judged, and a TREC file could not hold it."""
    if rid.split() != [rid]:
        raise InputError(
            f"{source}:{line}: the id {_short(rid)} holds whitespace (ids are single words, as in TREC files)"
        )


def _first_time(seen: dict[str, int], rid: str, source: str, line: int) -> None:
    """Remember an id's line, or fail naming both lines if it was seen before."""
    if rid in seen:
        raise InputError(f"{source}:{line}: duplicate id {rid!r} (first on line {seen[rid]})")
    seen[rid] = line


_SPACE = re.compile(r"\s")  # what str.split() splits on (both test str.isspace)


def _plain_ids(ids: list) -> bool:
    """Whether ids are distinct non-empty strings without whitespace: a set and one search over them all."""
    return all(type(i) is str and i for i in ids) and len(set(ids)) == len(ids) and not _SPACE.search("\0".join(ids))


def _check_ids(ids: list[str], lines: list[int], source: str) -> None:
    """`_check_id` and `_first_time` of each id on its line, in order (the first failure raised): at once when
    every id passes (`_plain_ids`, 0.3 s less at 100,000 documents), else one by one."""
    if _plain_ids(ids):
        return
    seen: dict[str, int] = {}
    for rid, n in zip(ids, lines):
        _check_id(rid, source, n)
        _first_time(seen, rid, source, n)
