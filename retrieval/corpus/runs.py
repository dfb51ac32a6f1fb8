"""Run files: an external system's ranked lists, read in one streamed pass into arrays.

A run is what an engine (Elasticsearch, OpenSearch, Pyserini, ...) exports: per question, documents with a score.
Four shapes are read, by the same parser and with the same errors, each naming the file and the line (a Parquet
file's row): TREC (`qid Q0 docid rank score tag`, plain or gzipped), ranx/ir_measures JSON
(`{"qid": {"docid": score, ...}, ...}`) and Parquet (columns qid, docid, score).

How the TREC text is read at engine scale (7M lines): a piece of about a MiB of whole lines at a time is split by
`bytes.split` in C; each line's field count is checked for the whole piece at once with numpy (one `bincount` of
the fields' starts over the lines); ids are interned once (one dict `setdefault` per line, in C through `map`);
scores are parsed by `float` through `map` and checked as a block (`np.isfinite`). A piece that is not plain ASCII,
or that fails any check, is read again line by line, and the line-by-line reader names the bad line exactly as
before. Memory: the arrays (20 bytes a line), the distinct ids, and one piece.

The ranking rule: score descending, ties by document id ascending (the article's and the built-in systems' rule,
`TIES_DEFAULT`), or `trec_eval`'s: ties by document id descending, as trec_eval and pytrec_eval order them. The rank
column is ignored, as trec_eval ignores it. A document listed twice for one question is an error.

The run itself and the arrays a reader fills are `run_model.py`; the JSON and Parquet readers are
`formats/run_json.py` and `formats/run_parquet.py`, filling the same arrays and so raising the same errors.
"""

from __future__ import annotations

import io
import itertools
import zlib
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from ..core.errors import InputError
from .files import read_file
from .formats.lines import Data, _newline_pieces, _short
from .formats.run_json import _json_run
from .formats.run_parquet import parse_parquet_run
from .formats.trec import _fields
from .run_model import TIES, TIES_DEFAULT, DocNames, TrecRun, _Lines, check_ties

_RUN_FORMAT = "expected 'qid Q0 docid rank score tag'"
# bytes that `str.splitlines` breaks a line at, or `str.split` splits on, other than what `bytes.split` knows:
# a piece holding one is read line by line, so that lines are numbered and split as the text reader does
_ODD_BYTES = (b"\x0b", b"\x0c", b"\x1c", b"\x1d", b"\x1e", b"\x1f")  # and a carriage return not before \n
_SPACE = np.zeros(256, dtype=bool)
_SPACE[[9, 10, 13, 32]] = True


def _trec_lines(text: str, first: int, out: _Lines) -> None:
    """A piece of TREC run text read line by line (the reference reader, and where each error is found)."""
    qids, dids, scores, lines, texts = [], [], [], [], []
    source = out.source
    for n, raw in enumerate(text.splitlines(), first):
        parts = _fields(raw, source, n)
        if not parts:
            continue
        if len(parts) != 6:
            raise InputError(f"{source}:{n}: {_RUN_FORMAT}, found {len(parts)} fields")
        qid, _, did, rank, score, tag = parts
        try:
            int(rank)
        except ValueError:
            raise InputError(f"{source}:{n}: the rank {_short(rank)} is not an integer") from None
        try:
            s = float(score)
        except ValueError:
            raise InputError(f"{source}:{n}: the score {_short(score)} is not a number") from None
        qids.append(qid.encode())
        dids.append(did.encode())
        scores.append(s)
        lines.append(n)
        texts.append(score)
        out.tags.add(tag.encode())
    if qids:
        out.add(qids, dids, np.array(scores, dtype=np.float64), np.array(lines), texts)


def _plain(piece: bytes) -> bool:
    """Whether a piece is ASCII with no byte that `str.splitlines` or `str.split` reads otherwise than a newline-
    and-whitespace split of bytes does (a lone carriage return, \\v, \\f, \\x1c-\\x1f): then its lines are its
    newlines and its fields `bytes.split`'s. A few scans in C, no regular expression."""
    if not piece.isascii() or any(b in piece for b in _ODD_BYTES):
        return False
    return b"\r" not in piece or piece.count(b"\r") == piece.count(b"\r\n")


def _trec_piece(piece: bytes, first: int, out: _Lines) -> bool:
    """A piece of plain ASCII TREC lines read as a block; False when it must be read line by line instead."""
    if not _plain(piece):
        return False
    raw = np.frombuffer(piece, dtype=np.uint8)
    space = _SPACE[raw]
    starts = ~space
    starts[1:] &= space[:-1]
    newlines = np.flatnonzero(raw == 10)
    n_lines = newlines.size + (0 if piece.endswith(b"\n") else 1)
    fields = np.bincount(np.searchsorted(newlines, np.flatnonzero(starts)), minlength=n_lines)
    if np.any((fields != 0) & (fields != 6)):
        return False
    if b"\t" in piece and not _tabs_plain(raw, newlines, fields):
        return False
    toks = piece.split()
    ranks = toks[3::6]
    if not b"".join(ranks).isdigit():
        return False
    texts = toks[4::6]
    try:
        scores = np.fromiter(map(float, texts), dtype=np.float64, count=len(texts))
    except ValueError:
        return False
    lines = np.flatnonzero(fields) + first
    finite = np.isfinite(scores)
    if not finite.all():  # named here with its text as written
        i = int(np.argmin(finite))
        raise InputError(f"{out.source}:{int(lines[i])}: the score {texts[i].decode()!r} is not a finite number")
    tags = toks[5::6]
    if tags.count(tags[0]) == len(tags):  # one tag throughout, as an engine writes it: compared in C
        out.tags.add(tags[0])
    else:
        out.tags.update(tags)
    out.add(toks[0::6], toks[2::6], scores, lines, texts)
    return True


def _tabs_plain(raw: np.ndarray, newlines: np.ndarray, fields: np.ndarray) -> bool:
    """Whether every line holding a tab has its six fields each between single tabs (no space inside a field:
    the tab check of `_fields` passes), so the block reader may read it."""
    per_line = np.bincount(np.searchsorted(newlines, np.flatnonzero(raw == 9)), minlength=fields.size)
    spaces = np.bincount(np.searchsorted(newlines, np.flatnonzero(raw == 32)), minlength=fields.size)
    has = per_line > 0
    return bool(np.all(per_line[has] == 5) and np.all(spaces[has] == 0))


def _chunks(data: Data) -> Iterator[bytes]:
    """The bytes of `data` in chunks (whole, or as they come)."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        yield bytes(data) if not isinstance(data, bytes) else data
    else:
        yield from data


def _gunzipped(data: Data, source: str) -> Iterator[bytes]:
    """A gzip stream's bytes decompressed a chunk at a time (memory: one chunk), or an error naming the file."""
    z = zlib.decompressobj(wbits=31)
    try:
        for chunk in _chunks(data):
            for i in range(0, len(chunk), 1 << 20):
                out = z.decompress(chunk[i : i + (1 << 20)], 1 << 22)
                yield out
                while z.unconsumed_tail:
                    yield z.decompress(z.unconsumed_tail, 1 << 22)
        if not z.eof:
            raise InputError(f"{source}: the gzip stream is cut short (the file is damaged or incomplete)")
    except zlib.error as e:
        raise InputError(f"{source}: not a readable gzip file ({e})") from None


def _peek(chunks: Iterator[bytes]) -> tuple[bytes, Iterator[bytes]]:
    """The first non-empty chunk and the stream with it put back."""
    for chunk in chunks:
        if chunk:
            return chunk, itertools.chain([chunk], chunks)
    return b"", iter(())


def parse_run(data: Data, source: str, name: str | None = None, ties: str = TIES_DEFAULT) -> TrecRun:
    """A run file's bytes (whole or in chunks) as a ranked run: TREC text, plain or gzipped, a JSON object of
    questions (`{"qid": {"docid": score}}`, as ranx and ir_measures write) or Parquet. The format is told by the
    content, not the name. Its name is `name`, else the one tag of a TREC file, else the file's stem."""
    check_ties(ties)
    head, chunks = _peek(_chunks(data))
    if head[:4] == b"PAR1":  # a Parquet file (an upload): read from memory
        return parse_parquet_run(io.BytesIO(b"".join(chunks)), source, name, ties)
    if head[:2] == b"\x1f\x8b":
        head, chunks = _peek(_gunzipped(chunks, source))
    if head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] in (b"{", b"["):
        return _json_run(b"".join(chunks), source, name, ties)
    out = _Lines(source)
    first = 1
    for piece in _newline_pieces(chunks):
        piece = bytes(piece)
        if first == 1 and piece[:3] == b"\xef\xbb\xbf":
            piece = piece[3:]
        if not _trec_piece(piece, first, out):
            for text in _text_of(piece, source, first):
                _trec_lines(text, first, out)
        first += _count_lines(piece)
    return out.run(name, ties)


def _text_of(piece: bytes, source: str, first: int) -> Iterator[str]:
    """A piece as text (UTF-8), an error naming the line of a byte that is not."""
    try:
        yield piece.decode("utf-8")
    except UnicodeDecodeError as e:
        at = first + piece[: e.start].count(b"\n")
        raise InputError(f"{source}:{at}: not UTF-8 text ({e.reason})") from None


def _count_lines(piece: bytes) -> int:
    """How many lines `str.splitlines` counts in a piece of whole lines (a plain ASCII piece: its newlines)."""
    if _plain(piece):
        return piece.count(b"\n") + (0 if piece.endswith(b"\n") or not piece else 1)
    return len(piece.decode("utf-8", errors="replace").splitlines())


def read_run(path: str | Path, name: str | None = None, ties: str = TIES_DEFAULT) -> TrecRun:
    """A run file read from disk: Parquet by its `.parquet` suffix, else TREC (plain or gzipped) or JSON by its
    content, streamed; its name is `name`, else the file's tag, else its stem."""
    path = Path(path)
    if path.suffix.lower() in (".parquet", ".pq"):
        read_file_checked(path)
        return parse_parquet_run(path, str(path), name, ties)
    return parse_run(_file_chunks(path), str(path), name, ties)


def read_file_checked(path: Path) -> None:
    """The checks `read_file` makes (a regular, readable file), without reading it whole."""
    if not path.exists():
        raise InputError(f"{path}: no such file")
    if not path.is_file():
        read_file(path)  # says what it is instead


def _file_chunks(path: Path) -> Iterator[bytes]:
    """A regular file's bytes a chunk at a time, or one error naming it (as `read_file`)."""
    read_file_checked(path)
    try:
        with open(path, "rb") as f:
            while chunk := f.read(1 << 22):
                yield chunk
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror})") from None


__all__ = [
    "TIES",
    "TIES_DEFAULT",
    "DocNames",
    "TrecRun",
    "check_ties",
    "parse_parquet_run",
    "parse_run",
    "read_run",
]
