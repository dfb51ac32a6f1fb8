"""Documents or questions in any format the lab reads (JSONL, CSV, TSV), chosen by the file's name, then by its
content; a dataset from three separate files (documents, questions, judgements)."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from ..model import Dataset, assemble
from .jsonl import parse_jsonl
from .table import parse_table
from .trec import parse_qrels

_LEADING_SPACE = re.compile(rb"\s*")  # what bytes.lstrip() strips, found without copying the rest


def parse_records(data: bytes, source: str) -> list[tuple[str, str]]:
    """Documents or questions from JSONL, CSV or TSV, chosen by the file name's extension (then by content)."""
    suffix = PurePosixPath(source).suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        return parse_jsonl(data, source)
    if suffix in (".csv", ".tsv", ".txt"):
        return parse_table(data, source)
    start = _LEADING_SPACE.match(data).end()
    return parse_jsonl(data, source) if data[start : start + 1] == b"{" else parse_table(data, source)


def from_files(
    docs: tuple[bytes, str], queries: tuple[bytes, str], qrels: tuple[bytes, str], name: str = "uploaded"
) -> Dataset:
    """A dataset from three separate files, each (bytes, file name): documents, questions, judgements."""
    return assemble(
        name,
        parse_records(*docs),
        parse_records(*queries),
        parse_qrels(*qrels),
        (docs[1], queries[1], qrels[1]),
    )
