"""Datasets: documents, questions and graded judgements, loaded from the shipped corpus or from user files.

Every parser takes the raw bytes and the file name it came from, so a bad line is reported as
``file:line: what is wrong`` (an `InputError`), whatever the source: a path, a zip member or an upload.

This module is the corpus's one import path: the data model (`model.py`), the readers of each format
(`formats/`), the bounds on what a read may cost (`limits.py`), reading from disk (`files.py`) and the writers
(`writers.py`) are re-exported here; a TREC run file is read here (`parse_run`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath

import numpy as np

from ..core.errors import InputError
from .files import read_file
from .formats.beir import BUILTIN, DATA_DIR, load, load_beir_dir, load_beir_zip
from .formats.jsonl import json_objects, parse_jsonl
from .formats.lines import Data, _short, text_lines, text_pieces
from .formats.records import from_files, parse_records
from .formats.table import parse_table
from .formats.trec import _fields, parse_qrels
from .limits import (
    APP_LIMITS,
    CLI_LIMITS,
    CLI_MAX_MEMBER_BYTES,
    CLI_MAX_TOTAL_BYTES,
    MAX_BYTES_ENV,
    MAX_GRADE,
    MAX_MEMBER_BYTES,
    MAX_TEXT_CHARS,
    MAX_TOTAL_BYTES,
    ZipLimits,
    read_members,
    zip_limits,
)
from .model import DOCUMENT_VALUES, Dataset, Qrels, assemble, valid_grade
from .writers import beir_zip, beir_zip_kept, format_qrels

__all__ = [
    "APP_LIMITS",
    "BUILTIN",
    "CLI_LIMITS",
    "CLI_MAX_MEMBER_BYTES",
    "CLI_MAX_TOTAL_BYTES",
    "DATA_DIR",
    "DOCUMENT_VALUES",
    "MAX_BYTES_ENV",
    "MAX_GRADE",
    "MAX_MEMBER_BYTES",
    "MAX_TEXT_CHARS",
    "MAX_TOTAL_BYTES",
    "Data",
    "Dataset",
    "Qrels",
    "TrecRun",
    "ZipLimits",
    "assemble",
    "beir_zip",
    "beir_zip_kept",
    "format_qrels",
    "from_files",
    "json_objects",
    "load",
    "load_beir_dir",
    "load_beir_zip",
    "parse_jsonl",
    "parse_qrels",
    "parse_records",
    "parse_run",
    "parse_table",
    "read_file",
    "read_members",
    "read_run",
    "text_lines",
    "text_pieces",
    "valid_grade",
    "zip_limits",
]


@dataclass(frozen=True, eq=False)
class TrecRun:
    """An external system's ranking as read from a TREC run file: per question, doc ids and scores."""

    name: str
    query_ids: tuple[str, ...]
    doc_ids: tuple[tuple[str, ...], ...]  # per question, ranked by score desc then doc id asc
    scores: tuple[np.ndarray, ...]
    warnings: tuple[str, ...] = ()

    @cached_property
    def fingerprint(self) -> str:
        """A hash of the whole content (name, questions, documents and every score): the key caches use."""
        h = hashlib.sha256()
        for part in ((self.name,), self.query_ids, *self.doc_ids):
            h.update(json.dumps(part).encode())
        for s in self.scores:
            h.update(np.ascontiguousarray(s, dtype=np.float64).tobytes())
            h.update(b"\x1e")
        return h.hexdigest()[:32]


def parse_run(data: Data, source: str, name: str | None = None) -> TrecRun:
    """A TREC run file (`qid Q0 docid rank score tag`), re-ranked by score, descending, ties by doc id, ascending.

    The rank column is ignored, as trec_eval ignores it. A document listed twice for one question is an error.
    """
    per_q: dict[str, dict[str, float]] = {}
    tags = set()
    for n, raw in text_lines(data, source):
        parts = _fields(raw, source, n)
        if not parts:
            continue
        if len(parts) != 6:
            raise InputError(f"{source}:{n}: expected 'qid Q0 docid rank score tag', found {len(parts)} fields")
        qid, _, did, rank, score, tag = parts
        try:
            int(rank)
        except ValueError:
            raise InputError(f"{source}:{n}: the rank {_short(rank)} is not an integer") from None
        try:
            s = float(score)
        except ValueError:
            raise InputError(f"{source}:{n}: the score {_short(score)} is not a number") from None
        if not np.isfinite(s):
            raise InputError(f"{source}:{n}: the score {score!r} is not a finite number")
        docs = per_q.setdefault(qid, {})
        if did in docs:
            raise InputError(f"{source}:{n}: document {did!r} is listed twice for question {qid!r}")
        docs[did] = s
        tags.add(tag)
    if not per_q:
        raise InputError(f"{source}:1: the run file holds no line")
    qids, dids, scores = [], [], []
    for qid, docs in per_q.items():
        ranked = sorted(docs.items(), key=lambda kv: (-kv[1], kv[0]))
        qids.append(qid)
        dids.append(tuple(d for d, _ in ranked))
        scores.append(np.array([s for _, s in ranked], dtype=np.float64))
    if name is None:
        name = next(iter(tags)) if len(tags) == 1 else PurePosixPath(source).stem
    return TrecRun(name, tuple(qids), tuple(dids), tuple(scores))


def read_run(path: str | Path, name: str | None = None) -> TrecRun:
    """A TREC run file read from disk (`parse_run` of its bytes); its name is `name`, else the file's tag."""
    path = Path(path)
    return parse_run(read_file(path), path.name, name)
