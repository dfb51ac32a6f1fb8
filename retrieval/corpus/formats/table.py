"""CSV and TSV: documents and questions as (id, text) rows under a header naming the columns."""

from __future__ import annotations

import csv
import io
import itertools
import re
from collections.abc import Iterator

from ...core.errors import InputError
from ..limits import MAX_TEXT_CHARS
from .lines import Data, _check_id, _first_time, _joined, text_pieces


def parse_table(data: Data, source: str) -> list[tuple[str, str]]:
    """(id, text) rows of a CSV or TSV file with a header naming the columns `id` and `text` (`title` optional),
    read a piece at a time (`text_pieces`: memory grows with the rows kept, not with the file)."""
    pieces = text_pieces(data, source)
    head = next(pieces, "")
    first = head.split("\n", 1)[0]
    delimiter = "\t" if first.count("\t") > first.count(",") else ","
    if csv.field_size_limit() < MAX_TEXT_CHARS:
        csv.field_size_limit(MAX_TEXT_CHARS)
    record: list[str] = []  # the lines handed to the reader for the record it is reading
    ended = [False]  # whether the reader has asked past the last line
    fresh = [False]  # whether the reader's next line starts a record (not inside a quoted field)
    skipped = [0]  # lines of blank pieces never handed to the reader (its line_num does not count them)

    def lines() -> Iterator[str]:
        for text in itertools.chain((head,), pieces):
            if fresh[0] and text.isspace():  # blank rows only, between records: counted as the reader counts lines
                skipped[0] += (
                    text.count("\n") + text.count("\r") - text.count("\r\n") + (not text.endswith(("\n", "\r")))
                )
                continue
            for ln in io.StringIO(text, newline=""):
                record.append(ln)
                fresh[0] = False
                yield ln
        ended[0] = True

    reader = csv.reader(lines(), delimiter=delimiter)
    try:
        header = [h.strip().lower() for h in next(reader)]
    except StopIteration:
        raise InputError(f"{source}:1: empty file, expected a header with the columns id and text") from None
    except csv.Error as e:
        raise InputError(f"{source}:1: {_csv_message(e)}") from None
    cols = {name: i for i, name in enumerate(header)}
    id_col = cols.get("id", cols.get("_id"))
    text_col = cols.get("text")
    if id_col is None or text_col is None:
        raise InputError(f"{source}:1: the header must name the columns id and text (found: {', '.join(header)})")
    title_col = cols.get("title")
    out = []
    seen: dict[str, int] = {}
    try:
        while True:
            record.clear()
            before, fresh[0] = reader.line_num, True
            row = next(reader, None)
            if row is None:
                break
            start_line, n = before + skipped[0] + 1, reader.line_num + skipped[0]  # blank pieces skipped come before
            if ended[0]:  # the last record, read to the end of the file: does it end inside quotes?
                _check_closed("".join(record), delimiter, source, start_line)
            if not row or all(not c.strip() for c in row):
                continue
            if len(row) != len(header):
                raise InputError(f"{source}:{n}: {len(row)} columns, the header has {len(header)}")
            rid, body = row[id_col].strip(), row[text_col]
            if not rid:
                raise InputError(f"{source}:{n}: empty id")
            _check_id(rid, source, n)
            _first_time(seen, rid, source, n)
            title = row[title_col] if title_col is not None else ""
            out.append((rid, _joined(title, body, source, n)))
    except csv.Error as e:
        raise InputError(f"{source}:{reader.line_num + skipped[0]}: {_csv_message(e)}") from None
    return out


def _csv_message(e: csv.Error) -> str:
    """The csv module's complaint, the field limit named as ours."""
    if "field limit" in str(e):
        return f"a field is longer than the limit of {MAX_TEXT_CHARS:,} characters"
    return str(e)


def _check_closed(record: str, delimiter: str, source: str, line: int) -> None:
    """An error when the last record of a file runs to its end inside quotes: a quote opened and never closed."""
    try:
        for _ in csv.reader(io.StringIO(record, newline=""), delimiter=delimiter, strict=True):
            pass
    except csv.Error as e:
        if "unexpected end of data" in str(e):
            opened, inside = 0, False
            for m in re.finditer('"', record):  # the last quote that opened a field ("" inside one: out and in again)
                inside = not inside
                opened = m.start() if inside else opened
            line += record.count("\n", 0, opened)
            raise InputError(
                f"{source}:{line}: a quote opened on this line is never closed "
                "(the rest of the file would be one field)"
            ) from None
