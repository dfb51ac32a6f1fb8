"""Datasets: documents, questions and graded judgements, loaded from the shipped corpus or from user files.

Every parser takes the raw bytes and the file name it came from, so a bad line is reported as
``file:line: what is wrong`` (an `InputError`), whatever the source: a path, a zip member or an upload.
"""

from __future__ import annotations

import csv
import hashlib
import importlib
import io
import itertools
import json
import os
import re
import stat
import zipfile
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path, PurePosixPath

import numpy as np
import orjson

from ..core.environment import bytes_from_env
from ..core.errors import InputError
from ..core.words import agree, plural

_PACKAGE = Path(__file__).resolve().parents[1]
# the built-in datasets: the repository's data/ in a source checkout, `retrieval/_data/` where the package is installed
# (pyproject.toml ships data/ there), found wherever the package runs from
DATA_DIR = next(
    (d for d in (_PACKAGE / "_data", _PACKAGE.parent / "data") if (d / "invented").is_dir()), _PACKAGE / "_data"
)
BUILTIN = {"invented": DATA_DIR / "invented"}

# The largest grade a judgement may carry, and negated the lowest (0 or less still means not relevant). nDCG_exp's gain is 2^g - 1, which
# overflows float64 past g = 1023 and turns every mean it reaches into NaN; 100 keeps any sum of gains finite
# and is far above any real grading scale (TREC and BEIR grade 0-4).
MAX_GRADE = 100


DOCUMENT_VALUES = ("doc_index", "tie_key")  # what a dataset's document ids alone decide (Dataset.lend)


def valid_grade(grade) -> bool:
    """The one rule of a judgement's grade: a whole number (not a bool) within +-MAX_GRADE."""
    return not isinstance(grade, bool) and isinstance(grade, (int, np.integer)) and abs(int(grade)) <= MAX_GRADE


# The longest document or question text, in characters, in every format (JSONL and CSV/TSV alike); the csv
# module's own field limit is raised to it.
MAX_TEXT_CHARS = 8 * 2**20
# What the files read from a zip may expand to, in bytes: each member, and the members read all together,
# checked against their declared sizes and again while decompressing (a 2 MB zip can hold 2 GB of zeros).
# The app, a server strangers reach, gets the lower bounds; the command line, which serves one person, the
# higher. The environment variable RETRIEVAL_LAB_MAX_BYTES (bytes, or with a K, M or G suffix) replaces both
# bounds of either, e.g. RETRIEVAL_LAB_MAX_BYTES=20G; it is read in `zip_limits` only.
MAX_MEMBER_BYTES = 256 * 2**20
MAX_TOTAL_BYTES = 512 * 2**20
CLI_MAX_MEMBER_BYTES = 4 * 2**30
CLI_MAX_TOTAL_BYTES = 8 * 2**30
MAX_BYTES_ENV = "RETRIEVAL_LAB_MAX_BYTES"
_CHUNK = 2**20


@dataclass(frozen=True)
class ZipLimits:
    """Bounds on what the members of a zip may expand to, in bytes: each one, and all those read together."""

    member: int
    total: int


APP_LIMITS = ZipLimits(MAX_MEMBER_BYTES, MAX_TOTAL_BYTES)
CLI_LIMITS = ZipLimits(CLI_MAX_MEMBER_BYTES, CLI_MAX_TOTAL_BYTES)


def zip_limits(default: ZipLimits = APP_LIMITS) -> ZipLimits:
    """`default`, or both bounds set by $RETRIEVAL_LAB_MAX_BYTES when it is set (an error names it when malformed)."""
    if not os.environ.get(MAX_BYTES_ENV, "").strip():
        return default
    n = bytes_from_env(MAX_BYTES_ENV, 0)
    return ZipLimits(n, n)


@dataclass(frozen=True, eq=False)
class Qrels:
    """Graded judgements as parallel arrays, sorted by question; a grade of 0 or less is judged not relevant."""

    query: np.ndarray  # question index, int64
    doc: np.ndarray  # document index, int64; -1 for a document that is not in the corpus
    doc_id: np.ndarray  # document id strings (object)
    grade: np.ndarray  # int64

    def __len__(self) -> int:
        return int(self.query.size)

    @property
    def relevant(self) -> np.ndarray:
        """Mask of the judgements with a positive grade."""
        return self.grade > 0


@dataclass(frozen=True, eq=False)
class Dataset:
    """Documents, questions and judgements of one collection, with the warnings raised while loading it."""

    name: str
    doc_ids: tuple[str, ...]
    doc_texts: tuple[str, ...]
    query_ids: tuple[str, ...]
    query_texts: tuple[str, ...]
    qrels: Qrels
    warnings: tuple[str, ...] = field(default=())

    @property
    def n_docs(self) -> int:
        """Number of documents."""
        return len(self.doc_ids)

    @property
    def n_queries(self) -> int:
        """Number of questions."""
        return len(self.query_ids)

    @cached_property
    def doc_index(self) -> dict[str, int]:
        """Document id -> position."""
        return {d: i for i, d in enumerate(self.doc_ids)}

    @cached_property
    def query_index(self) -> dict[str, int]:
        """Question id -> position."""
        return {q: i for i, q in enumerate(self.query_ids)}

    @cached_property
    def tie_key(self) -> np.ndarray:
        """Each document's position in ascending id order: ties in score are broken by this key."""
        order = np.argsort(np.array(self.doc_ids, dtype=object), kind="stable")
        key = np.empty(len(order), dtype=np.int64)
        key[order] = np.arange(len(order))
        return key

    @cached_property
    def n_relevant(self) -> np.ndarray:
        """Relevant documents per question."""
        rel = self.qrels.relevant
        return np.bincount(self.qrels.query[rel], minlength=self.n_queries)

    @cached_property
    def evaluated(self) -> np.ndarray:
        """Indices of the questions with at least one relevant document: the ones every mean is over."""
        return np.flatnonzero(self.n_relevant > 0)

    @cached_property
    def _corpus_hash(self):
        """The hash of the documents and questions (ids and texts), before the judgements are added to it."""
        h = hashlib.sha256()
        for part in (self.doc_ids, self.doc_texts, self.query_ids, self.query_texts):
            h.update("\x1f".join(part).encode())
            h.update(b"\x1e")
        return h

    @cached_property
    def corpus_fingerprint(self) -> str:
        """A hash of the documents and questions (ids and texts), not the judgements: what an index, BM25's
        columns, an LSA fit and dense vectors depend on (datasets differing only in judgements share it)."""
        return self._corpus_hash.copy().hexdigest()[:16]

    @cached_property
    def fingerprint(self) -> str:
        """A hash of the whole content, the key the app caches indexes and results on."""
        h = self._corpus_hash.copy()
        h.update(self.qrels.query.tobytes() + self.qrels.doc_id.astype(str).tobytes() + self.qrels.grade.tobytes())
        return h.hexdigest()[:16]

    def with_judgements(self, judgements: Iterable[tuple[str, str, int]]) -> Dataset:
        """The same documents and questions with `judgements` (question id, document id, grade) added after
        each question's own; nothing else changes (name, warnings).

        A judgement may not overwrite one the dataset holds: grading a pair already judged, naming an unknown
        question or document, judging a pair twice or a grade that is not an integer within +-MAX_GRADE is an
        InputError naming it. What depends on the texts only (the hash of the texts, the id indexes, the tie
        key) is carried over, not recomputed: `corpus_fingerprint` is the same, `fingerprint` differs.
        """
        qr = self.qrels
        judged = set(zip(qr.query.tolist(), qr.doc_id.tolist()))
        rows: list[tuple[int, int, str, int]] = []
        for qid, did, grade in judgements:
            q, d = self.query_index.get(qid), self.doc_index.get(did)
            what = f"{self.name}: the judgement of document {_short(str(did))} for question {_short(str(qid))}"
            if q is None:
                raise InputError(f"{what}: no such question")
            if d is None:
                raise InputError(f"{what}: no such document")
            if not valid_grade(grade):
                raise InputError(f"{what}: the grade {grade!r} is not an integer within +-{MAX_GRADE}")
            if (q, did) in judged:
                raise InputError(f"{what}: the pair is judged already (judgements are added, never overwritten)")
            judged.add((q, did))
            rows.append((q, d, did, int(grade)))
        if not rows:
            return self
        query = np.concatenate((qr.query, np.array([r[0] for r in rows], dtype=np.int64)))
        order = np.argsort(query, kind="stable")  # each question's own judgements first, the new ones after
        new = Qrels(
            query=query[order],
            doc=np.concatenate((qr.doc, np.array([r[1] for r in rows], dtype=np.int64)))[order],
            doc_id=np.concatenate((qr.doc_id, np.array([r[2] for r in rows], dtype=object)))[order],
            grade=np.concatenate((qr.grade, np.array([r[3] for r in rows], dtype=np.int64)))[order],
        )
        return self.lend(
            replace(self, qrels=new), (*DOCUMENT_VALUES, "_corpus_hash", "corpus_fingerprint", "query_index")
        )

    def lend(self, out: Dataset, names: tuple[str, ...] = ()) -> Dataset:
        """`out`, a dataset of the same documents (or texts, for the question-side names), with this one's cached
        values `names` (default DOCUMENT_VALUES) given instead of recomputed: 40 ms of id sorting at 100k documents."""
        for name in names or DOCUMENT_VALUES:
            out.__dict__[name] = getattr(self, name)
        return out

    def renamed(self, name: str) -> Dataset:
        """The same dataset under another name (its fingerprint does not hold the name)."""
        if name == self.name:
            return self
        return self.lend(
            replace(self, name=name),
            (*DOCUMENT_VALUES, "_corpus_hash", "corpus_fingerprint", "query_index", "fingerprint"),
        )

    def judgements(self) -> list[tuple[str, str, int]]:
        """Every judgement as (question id, document id, grade), in the qrels' order."""
        qr = self.qrels
        return [(self.query_ids[q], d, g) for q, d, g in zip(qr.query.tolist(), qr.doc_id.tolist(), qr.grade.tolist())]

    def relevant_of(self, q: int) -> dict[str, int]:
        """The judged documents of question `q` with a positive grade, id -> grade."""
        m = (self.qrels.query == q) & self.qrels.relevant
        return dict(zip(self.qrels.doc_id[m].tolist(), self.qrels.grade[m].tolist()))


# --------------------------------------------------------------------------------------------- parsers


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


def _text_of(record: dict, source: str, line: int) -> str:
    """Title and text joined by a space, as BEIR does."""
    title, text = record.get("title", ""), record.get("text")
    if text is None and "contents" in record:
        text = record["contents"]
    if text is None:
        raise InputError(f"{source}:{line}: no 'text' field")
    if not isinstance(text, str) or not isinstance(title or "", str):
        raise InputError(f"{source}:{line}: 'title' and 'text' must be strings")
    return _joined(title, text, source, line)


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


def _loads(raw: str):
    """json.loads of one line, read by orjson (3x faster: 0.13 against 0.41 s for 100,000 documents' lines). A line
    orjson refuses (broken JSON, and what the json module accepts beyond the standard: NaN, lone surrogates) is read
    by json.loads, and so is an object with a float among its values: orjson reads an integer past 64 bits as a
    float where json reads an int (an id stays the id written). So the messages and the values the lab reads are
    json's; a number deeper in (a vector's) is the same float either way, correctly rounded."""
    try:
        rec = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)
    if type(rec) is dict and float in map(type, rec.values()):
        return json.loads(raw)
    return rec


def json_objects(data: Data, source: str) -> Iterator[tuple[int, dict]]:
    """(line number, object) of each non-blank line of a JSONL file, read a piece at a time (`text_lines`); an error
    names the line that is not an object."""
    for n, raw in text_lines(data, source):
        if not raw.strip():
            continue
        try:
            rec = _loads(raw)
        except json.JSONDecodeError as e:
            raise InputError(f"{source}:{n}: broken JSON ({e.msg} at column {e.colno})") from None
        except RecursionError:
            raise InputError(f"{source}:{n}: JSON nested too deep") from None
        if not isinstance(rec, dict):
            raise InputError(f"{source}:{n}: a line must be a JSON object")
        yield n, rec


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


def parse_jsonl(data: Data, source: str) -> list[tuple[str, str]]:
    """(id, text) records of a JSONL file (`_id` or `id`; `title` + `text`); blank lines are skipped. Of several
    faults the first line's is named, the id's before the text's (ids are checked together, `_check_ids`)."""
    out, ids, lines = [], [], []
    try:
        for n, rec in json_objects(data, source):
            rid = rec.get("_id", rec.get("id"))
            if rid is None or (isinstance(rid, str) and not rid.strip()):
                raise InputError(f"{source}:{n}: no '_id' (or 'id') field")
            rid = str(rid)
            ids.append(rid)
            lines.append(n)
            out.append((rid, _text_of(rec, source, n)))
    except InputError:
        _check_ids(ids, lines, source)  # an id fault on an earlier line (or this one) comes first
        raise
    _check_ids(ids, lines, source)
    return out


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


def _short(value: str, width: int = 40) -> str:
    """A field for a message, cut when long."""
    return repr(value if len(value) <= width else value[:width] + "...")


def _fields(raw: str, source: str, line: int) -> list[str]:
    """The whitespace-separated fields of a qrels or run line; a tab-separated line whose field holds a space is an
    error (its id could never be judged, and splitting on the space would shift every column)."""
    parts = raw.split()
    if "\t" in raw:
        tabbed = raw.strip().split("\t")
        if len(tabbed) in (3, 4, 6) and len(tabbed) != len(parts):
            bad = next((f.strip() for f in tabbed if f.strip().split() != [f.strip()]), "")
            raise InputError(
                f"{source}:{line}: the field {_short(bad)} holds whitespace (ids are single words, as in TREC files)"
            )
    return parts


def parse_qrels(data: Data, source: str) -> list[tuple[str, str, int]]:
    """(question, document, grade) from TREC qrels (`qid 0 docid grade`) or a BEIR tsv (`query-id corpus-id score`)."""
    out = []
    for n, raw in text_lines(data, source):
        parts = _fields(raw, source, n)
        if not parts:
            continue
        if n == 1 and [p.lower() for p in parts[:2]] == ["query-id", "corpus-id"]:
            continue  # BEIR header
        if len(parts) == 4:
            qid, _, did, grade = parts
        elif len(parts) == 3:
            qid, did, grade = parts
        else:
            raise InputError(
                f"{source}:{n}: expected 'qid 0 docid grade' (TREC) or 'query-id corpus-id score' (BEIR), "
                f"found {len(parts)} fields"
            )
        try:
            g = int(grade)
        except ValueError:
            raise InputError(f"{source}:{n}: the grade {_short(grade)} is not an integer") from None
        if abs(g) > MAX_GRADE:
            raise InputError(f"{source}:{n}: the grade {_short(grade)} is beyond the limit of +-{MAX_GRADE}")
        out.append((qid, did, g))
    return out


def format_qrels(judgements: Iterable[tuple[str, str, int]]) -> str:
    """Judgements (question id, document id, grade) as TREC qrels, ``qid 0 docid grade`` per line: what
    `parse_qrels` reads back to the same triples (ids are single words, so each line splits into four fields)."""
    lines = [f"{q} 0 {d} {int(g)}" for q, d, g in judgements]
    return "\n".join(lines) + ("\n" if lines else "")


# --------------------------------------------------------------------------------------------- assembly


def _check_unique(records: list[tuple[str, str]], source: str, what: str) -> None:
    """An error naming the first duplicated id and both of its lines' positions, or the first id holding whitespace."""
    if _plain_ids([rid for rid, _ in records]):
        return
    seen: dict[str, int] = {}
    for i, (rid, _) in enumerate(records, 1):
        if rid in seen:
            raise InputError(f"{source}: duplicate {what} id {rid!r} (records {seen[rid]} and {i})")
        if not isinstance(rid, str) or rid.split() != [rid]:
            raise InputError(
                f"{source}: record {i}: the {what} id {_short(str(rid))} is not a single word "
                "(ids are single words, as in TREC files)"
            )
        seen[rid] = i


def assemble(
    name: str,
    docs: list[tuple[str, str]],
    queries: list[tuple[str, str]],
    judgements: list[tuple[str, str, int]],
    sources: tuple[str, str, str] = ("documents", "questions", "judgements"),
) -> Dataset:
    """A validated Dataset; judgements naming unknown questions are left out and unknown documents kept, both counted in warnings."""
    doc_src, q_src, qrels_src = sources
    if not docs:
        raise InputError(f"{doc_src}: the corpus is empty")
    if not queries:
        raise InputError(f"{q_src}: no question")
    _check_unique(docs, doc_src, "document")
    _check_unique(queries, q_src, "question")
    doc_index = {d: i for i, (d, _) in enumerate(docs)}
    query_index = {q: i for i, (q, _) in enumerate(queries)}
    seen: set[tuple[str, str]] = set()
    rows = []
    unknown_q: dict[str, int] = {}
    unknown_d: dict[str, int] = {}
    for qid, did, grade in judgements:
        if (qid, did) in seen:
            raise InputError(f"{qrels_src}: question {qid!r} judges document {did!r} twice")
        seen.add((qid, did))
        if not valid_grade(grade):
            raise InputError(
                f"{qrels_src}: question {qid!r} grades document {did!r} {grade!r}: "
                f"expected an integer within +-{MAX_GRADE}"
            )
        if qid not in query_index:
            unknown_q[qid] = unknown_q.get(qid, 0) + 1
            continue
        if did not in doc_index:
            unknown_d[did] = unknown_d.get(did, 0) + 1
        rows.append((query_index[qid], doc_index.get(did, -1), did, grade))
    warnings = []
    if unknown_q:
        n = sum(unknown_q.values())
        ex = ", ".join(sorted(unknown_q)[:5])
        m = len(unknown_q)
        warnings.append(
            f"{qrels_src}: {plural(n, 'judgement')} {agree(n, 'names', 'name')} {plural(m, 'question')} that "
            f"{agree(m, 'is', 'are')} not in {q_src} ({ex}); {agree(n, 'it is', 'they are')} left out"
        )
    if unknown_d:
        n = sum(unknown_d.values())
        ex = ", ".join(sorted(unknown_d)[:5])
        m = len(unknown_d)
        warnings.append(
            f"{qrels_src}: {plural(n, 'judgement')} {agree(n, 'names', 'name')} {plural(m, 'document')} that "
            f"{agree(m, 'is', 'are')} not in {doc_src} ({ex}); {agree(n, 'it is', 'they are')} kept: no system can "
            f"retrieve {agree(m, 'it', 'them')}, but {agree(n, 'it counts', 'they count')} in recall and in the ideal DCG"
        )
    if not any(g > 0 for *_, g in rows):
        raise InputError(f"{qrels_src}: no judgement with a positive grade names a known question")
    rows.sort(key=lambda r: r[0])
    qrels = Qrels(
        query=np.array([r[0] for r in rows], dtype=np.int64),
        doc=np.array([r[1] for r in rows], dtype=np.int64),
        doc_id=np.array([r[2] for r in rows], dtype=object),
        grade=np.array([r[3] for r in rows], dtype=np.int64),
    )
    return Dataset(
        name=name,
        doc_ids=tuple(d for d, _ in docs),
        doc_texts=tuple(t for _, t in docs),
        query_ids=tuple(q for q, _ in queries),
        query_texts=tuple(t for _, t in queries),
        qrels=qrels,
        warnings=tuple(warnings),
    )


def _beir_members(names: list[str], source: str) -> tuple[str, str, str]:
    """Paths of corpus.jsonl, queries.jsonl and the qrels file among the entries of a BEIR folder or zip."""
    corpus = sorted((n for n in names if PurePosixPath(n).name == "corpus.jsonl"), key=lambda n: (n.count("/"), n))
    if not corpus:
        raise InputError(
            f"{source}: no corpus.jsonl (a BEIR dataset holds corpus.jsonl, queries.jsonl and qrels/test.tsv)"
        )
    root = PurePosixPath(corpus[0]).parent
    queries = str(root / "queries.jsonl")
    if queries not in names:
        raise InputError(f"{source}: no queries.jsonl beside {corpus[0]}")
    qrels_dir = root / "qrels"
    test = str(qrels_dir / "test.tsv")
    if test in names:
        return corpus[0], queries, test
    candidates = sorted(
        n for n in names if PurePosixPath(n).parent == qrels_dir and n.endswith((".tsv", ".txt", ".qrels"))
    )
    if len(candidates) != 1:
        found = ", ".join(PurePosixPath(c).name for c in candidates) or "none"
        raise InputError(f"{source}: expected qrels/test.tsv or a single file in qrels/ (found: {found})")
    return corpus[0], queries, candidates[0]


_RAISE_IT = f"(raise it with the environment variable {MAX_BYTES_ENV}, e.g. {MAX_BYTES_ENV}=20G)"


def _declared(zf: zipfile.ZipFile, members: tuple[str, ...], source: str, limits: ZipLimits) -> list[zipfile.ZipInfo]:
    """The members' entries, or an error when what they declare is beyond `limits`."""
    infos = [zf.getinfo(m) for m in members]
    for info in infos:
        if info.file_size > limits.member:
            raise InputError(
                f"{source}/{info.filename}: declares {info.file_size:,} bytes uncompressed, more than the "
                f"limit of {limits.member:,} bytes per member {_RAISE_IT}"
            )
    declared = sum(info.file_size for info in infos)
    if declared > limits.total:
        raise InputError(
            f"{source}: {', '.join(members)} declare {declared:,} bytes uncompressed, more than the limit "
            f"of {limits.total:,} bytes in all {_RAISE_IT}"
        )
    return infos


def _member_chunks(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, source: str, limits: ZipLimits, total: list[int]
) -> Iterator[bytes]:
    """A member's bytes a chunk at a time as it is decompressed, refused once past `limits` (`total`: the bytes of
    the members read before it, counted on)."""
    size = 0
    try:
        with zf.open(info) as f:
            while chunk := f.read(_CHUNK):
                size += len(chunk)
                total[0] += len(chunk)
                if size > limits.member:
                    raise InputError(
                        f"{source}/{info.filename}: expands past the limit of {limits.member:,} bytes "
                        f"per member {_RAISE_IT}"
                    )
                if total[0] > limits.total:
                    raise InputError(
                        f"{source}/{info.filename}: the members expand past the limit of "
                        f"{limits.total:,} bytes in all {_RAISE_IT}"
                    )
                yield chunk
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as e:
        raise InputError(f"{source}/{info.filename}: damaged zip member ({e})") from None
    except (RuntimeError, NotImplementedError) as e:  # encrypted member, unsupported compression
        raise InputError(f"{source}/{info.filename}: cannot be read ({e})") from None


def read_members(zf: zipfile.ZipFile, members: tuple[str, ...], source: str, limits: ZipLimits) -> list[bytearray]:
    """The bytes of zip members, each bound by `limits` on its declared size and again while it is decompressed."""
    out, total = [], [0]
    for info in _declared(zf, members, source, limits):
        buf = bytearray()
        for chunk in _member_chunks(zf, info, source, limits, total):
            buf += chunk
        out.append(buf)
    return out


def load_beir_zip(data: bytes, source: str, limits: ZipLimits | None = None) -> Dataset:
    """A BEIR dataset from the bytes of a .zip (its files at the top or inside one folder).

    `limits` bounds what its members may expand to: by default `zip_limits()`, the app's bounds (the command line
    passes `zip_limits(CLI_LIMITS)`). Each member is parsed as it is decompressed, never held whole: memory grows
    with the records kept, not with the members' size (a corpus.jsonl of a GiB of newlines costs a MiB).
    """
    limits = limits or zip_limits()
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, EOFError, ValueError):
        raise InputError(f"{source}: not a zip file") from None
    with zf:
        names = [n for n in zf.namelist() if not n.endswith("/") and "__MACOSX" not in n]
        members = _beir_members(names, source)
        infos, total = _declared(zf, members, source, limits), [0]
        srcs = tuple(f"{source}/{n}" for n in members)
        parsed = [
            parse(_member_chunks(zf, info, source, limits, total), src)
            for parse, info, src in zip((parse_jsonl, parse_jsonl, parse_qrels), infos, srcs)
        ]
    return assemble(PurePosixPath(source).stem, *parsed, srcs)


def beir_zip(ds: Dataset) -> bytes:
    """The dataset as a BEIR zip: corpus.jsonl and queries.jsonl (each text whole in "text"), qrels/test.tsv in the
    qrels' order, at the zip's top level. `load_beir_zip` reads it back to the same content (the same fingerprint)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for member, ids, texts in (
            ("corpus.jsonl", ds.doc_ids, ds.doc_texts),
            ("queries.jsonl", ds.query_ids, ds.query_texts),
        ):
            zf.writestr(member, b"".join(orjson.dumps({"_id": i, "text": t}) + b"\n" for i, t in zip(ids, texts)))
        rows = "".join(f"{q}\t{d}\t{g}\n" for q, d, g in ds.judgements())
        zf.writestr("qrels/test.tsv", "query-id\tcorpus-id\tscore\n" + rows)
    return buf.getvalue()


def beir_zip_kept(data: bytes, source: str) -> bytes:
    """The BEIR zip with only the members `load_beir_zip` reads (corpus, questions, the qrels file), under the same
    names, so it loads to the same content: what the store keeps of an upload (a member never read is neither kept
    nor counted against the store's limit). The bytes as given when it holds nothing else. Call it on a zip that
    `load_beir_zip` read: the members kept were bounded there."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, EOFError, ValueError):
        raise InputError(f"{source}: not a zip file") from None
    with zf:
        infos = zf.infolist()
        kept = _beir_members([n for n in zf.namelist() if not n.endswith("/") and "__MACOSX" not in n], source)
        if len(infos) == len(kept):
            return data
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
            for name in kept:
                info = zipfile.ZipInfo(name, zf.getinfo(name).date_time)
                info.compress_type = zipfile.ZIP_DEFLATED
                with zf.open(name) as a, dst.open(info, "w", force_zip64=True) as b:
                    while chunk := a.read(1 << 20):
                        b.write(chunk)
    return out.getvalue()


_NOT_REGULAR = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def read_file(path: Path) -> bytes:
    """A regular file's bytes, or one error naming it: missing, unreadable, or not a regular file (a FIFO, a device
    such as a `.zip` link to /dev/zero, a folder), which is never read (opened without blocking, checked, closed)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO with no writer opens at once instead of hanging
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        kind = next((what for test, what in _NOT_REGULAR if test(mode)), None if stat.S_ISREG(mode) else "not a file")
        if kind is not None:
            raise InputError(f"{path}: {kind}, not a regular file: not read")
        os.set_blocking(fd, True)
        try:
            return f.read()
        except OSError as e:
            raise InputError(f"{path}: cannot be read ({e.strerror})") from None


def _folder_names(path: Path) -> list[str]:
    """The names in a folder, or one error naming it when it cannot be listed (no read permission)."""
    try:
        return os.listdir(path)
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror})") from None


def load_beir_dir(path: Path, name: str | None = None) -> Dataset:
    """A BEIR dataset from a folder."""
    if not path.is_dir():
        raise InputError(f"{path}: not a folder")
    _folder_names(path)  # a folder it may not list: said as such, not as a folder missing its files
    missing = [n for n in ("corpus.jsonl", "queries.jsonl") if not (path / n).is_file()]
    missing += [] if (path / "qrels").is_dir() else ["qrels/"]
    if missing:
        raise InputError(
            f"{path}: not a BEIR folder, its top level has no {', '.join(missing)} "
            "(a BEIR folder holds corpus.jsonl, queries.jsonl and qrels/test.tsv)"
        )
    names = ["corpus.jsonl", "queries.jsonl"] + [
        f"qrels/{n}" for n in sorted(_folder_names(path / "qrels")) if (path / "qrels" / n).is_file()
    ]
    c, q, r = _beir_members(names, str(path))
    paths = [path / n for n in (c, q, r)]
    srcs = tuple(str(p) for p in paths)
    return assemble(
        name or path.name,
        parse_jsonl(read_file(paths[0]), srcs[0]),
        parse_jsonl(read_file(paths[1]), srcs[1]),
        parse_qrels(read_file(paths[2]), srcs[2]),
        srcs,
    )


def load(name_or_path: str | Path = "invented", limits: ZipLimits | None = None) -> Dataset:
    """A built-in dataset by name (`invented`) or a BEIR folder or .zip by path (`limits`: see `load_beir_zip`)."""
    key = str(name_or_path)
    if key in BUILTIN:
        return load_beir_dir(BUILTIN[key], name=key)
    path = Path(key)
    if path.is_dir():
        return load_beir_dir(path)
    if path.suffix.lower() == ".zip":
        return load_beir_zip(read_file(path), str(path), limits)
    if not path.exists():
        raise InputError(f"{key}: no such dataset (built-in: {', '.join(BUILTIN)}; or a BEIR folder or .zip)")
    raise InputError(f"{key}: not a BEIR folder or .zip")


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


_IN_RUNS = ("TrecRun", "parse_run", "read_run")  # run files are read by runs.py (streamed, into arrays)


def __getattr__(name: str):
    """`dataset.parse_run`, `dataset.TrecRun`, `dataset.read_run`: the names runs.py defines, as before it did
    (looked up on use, since runs.py reads its lines with this module's helpers)."""
    if name in _IN_RUNS:
        return getattr(importlib.import_module(f"{__package__}.runs"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
