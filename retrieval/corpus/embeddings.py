"""Precomputed embeddings: document and question vectors read from a file, checked, and aligned with a dataset.

Every loader takes the raw bytes and the file name they came from (like `dataset.py`'s parsers) and raises one
`InputError` naming the file and the line, row or array for bad input. Three formats:

- `.npz` (`load_npz`): arrays `doc_ids`, `doc_vectors`, `query_ids`, `query_vectors` (and optionally `model`,
  a string); read with `np.load(..., allow_pickle=False)`, never a pickle.
- JSONL (`load_jsonl`): a documents file and a questions file, each line `{"id": ..., "vector": [...]}`.
- Parquet (`load_parquet`): a documents file and a questions file with the columns `id` and `vector` (a list of
  numbers); it needs pyarrow, which Streamlit installs; without it the loader says so.

Vectors are checked (real numbers, 2-D, one width for documents and questions, finite, not zero, ids unique)
and their rows scaled to unit length, stored as float32: a score is then a cosine. `align` (alignment.py, re-exported
here) puts them in the dataset's document and question order.

Memory is bounded by what the vectors can mean, before anything is decompressed or allocated (`Limits`):

- rows: at most one document vector per document of the dataset they are for and one question vector per question
  (the document side and the question side are bounded apart, as the loaders read them apart);
- width: at most `MAX_DIM` dimensions;
- bytes: everything one upload expands to as read (every array of an `.npz`, both files of a pair) at most
  `MAX_BYTES` in all.

An `.npz` is checked from each member's array header and zip entry, a Parquet file from its footer (rows, the
vector column's values and type), a JSONL file by its text's size, then line by line as it is parsed.

Over 500 lines and one concept: vectors read and checked, the three formats' readers sharing the checks and bounds
above (their alignment to a dataset is `alignment.py`).
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import PurePosixPath

import numpy as np

from ..core.errors import InputError
from ..core.words import agree, plural
from .alignment import Aligned, align  # noqa: F401  (re-exported: `embeddings.align` is how callers align)
from .dataset import Dataset, json_objects

MAX_BYTES = 1 << 30  # 1 GiB: what one upload expands to as read, all its arrays or both its files together
MAX_DIM = (
    4096  # the widest vectors accepted (e5-small's are 384 wide, e5-large's 1,024, text-embedding-3-large's 3,072)
)
NPZ_ARRAYS = ("doc_ids", "doc_vectors", "query_ids", "query_vectors")
_REAL = "iuf"  # dtype kinds accepted as vector values: integers and floats (not bool, complex, strings, objects)


def _size_text(n: int) -> str:
    return f"{n / (1 << 20):,.1f} MB"


def _check_size(n_bytes: int, where: str) -> None:
    """Refuse more than MAX_BYTES, naming what and both sizes."""
    if n_bytes > MAX_BYTES:
        raise InputError(
            f"{where} is {_size_text(n_bytes)}, above the {_size_text(MAX_BYTES)} limit (embeddings.MAX_BYTES)"
        )


class _Upload:
    """The bytes one upload expands to, added up over its arrays or files; more than MAX_BYTES in all is refused,
    naming the array or file that crosses the limit (`as_what`: how they are counted, for the message)."""

    def __init__(self, as_what: str = "") -> None:
        self.total = 0
        self.as_what = as_what

    def add(self, n_bytes: int, where: str) -> None:
        _check_size(n_bytes, where)
        self.total += n_bytes
        if self.total > MAX_BYTES:
            raise InputError(
                f"{where} ({_size_text(n_bytes)}) brings the upload to {_size_text(self.total)}"
                f"{self.as_what}, above the {_size_text(MAX_BYTES)} limit of one upload (embeddings.MAX_BYTES)"
            )


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def check_width(width: int, where: str) -> None:
    """Refuse vectors wider than MAX_DIM, naming where and both widths."""
    if width > MAX_DIM:
        raise InputError(f"{where}: vectors of {width:,} dimensions, above the {MAX_DIM:,} limit (embeddings.MAX_DIM)")


DOCUMENTS, QUESTIONS = 0, 1  # the two sides of an upload


@dataclass(frozen=True)
class Limits:
    """The most vectors each side of an upload may hold: one per document and one per question of the dataset they
    are for (`Limits.of(dataset)`); None: not bounded (vectors read without a dataset). Vectors beyond these
    would name ids the dataset does not have (ids are unique): they could only be left out."""

    documents: int | None = None
    questions: int | None = None

    @classmethod
    def of(cls, dataset: Dataset) -> Limits:
        return cls(dataset.n_docs, dataset.n_queries)

    def check_rows(self, side: int, rows: int, where: str) -> None:
        """Refuse more rows on a side than the dataset has documents (side 0) or questions (side 1)."""
        most, what = ((self.documents, "document"), (self.questions, "question"))[side]
        if most is not None and rows > most:
            raise InputError(
                f"{where}: {_plural(rows, 'row')}, more than the dataset's {_plural(most, what)} "
                f"(one vector a {what} at most)"
            )


@dataclass(frozen=True, eq=False)
class Embeddings:
    """Document and question vectors as read (unit rows, float32), the model that made them, and load warnings."""

    model: str
    doc_ids: tuple[str, ...]
    doc_vectors: np.ndarray  # documents x dim, float32, unit rows
    query_ids: tuple[str, ...]
    query_vectors: np.ndarray  # questions x dim, float32, unit rows
    warnings: tuple[str, ...] = ()
    sources: tuple[str, str] = ("documents", "questions")  # where the two sides came from (for messages)

    @property
    def dim(self) -> int:
        """The vectors' width."""
        return int(self.doc_vectors.shape[1])

    @cached_property
    def fingerprint(self) -> str:
        """A hash of the content: the model, both id lists and every vector's bytes."""
        h = hashlib.sha256()
        for part in ((self.model,), self.doc_ids, self.query_ids):
            h.update(json.dumps(part).encode())
        for v in (self.doc_vectors, self.query_vectors):
            h.update(str(v.shape).encode())
            h.update(np.ascontiguousarray(v, dtype=np.float32).tobytes())
        return h.hexdigest()[:32]


# --------------------------------------------------------------------------------------------- checks


def _unique_ids(ids: Sequence[str], locate: Callable[[int], str]) -> tuple[str, ...]:
    """The ids as a tuple, or an error naming the first empty or repeated one and where both copies are."""
    seen: dict[str, int] = {}
    for i, rid in enumerate(ids):
        if not rid.strip():
            raise InputError(f"{locate(i)}: empty id")
        if rid in seen:
            raise InputError(f"{locate(i)}: duplicate id {rid!r} (first at {locate(seen[rid])})")
        seen[rid] = i
    return tuple(ids)


def unit_rows(values: np.ndarray, ids: Sequence[str], where: str, locate: Callable[[int], str]) -> np.ndarray:
    """Vectors checked (real numbers, 2-D, one per id, finite, not zero) and scaled to unit length, as float32.

    Each row is divided by its largest magnitude before its norm is taken, so a finite row never overflows.
    """
    values = np.asarray(values)
    if values.dtype.kind not in _REAL:
        raise InputError(f"{where}: vectors must be real numbers, found dtype {values.dtype}")
    if values.ndim != 2:
        raise InputError(f"{where}: vectors must be a 2-D array (one row per id), found shape {values.shape}")
    if values.shape[0] != len(ids):
        raise InputError(f"{where}: {plural(values.shape[0], 'vector')} for {plural(len(ids), 'id')}")
    if values.shape[0] and values.shape[1] == 0:
        raise InputError(f"{where}: the vectors have no dimension")
    v = values.astype(np.float64)
    bad = np.flatnonzero(~np.isfinite(v).all(axis=1))
    if bad.size:
        raise InputError(
            f"{locate(int(bad[0]))}: {plural(bad.size, 'vector')} {agree(bad.size, 'holds', 'hold')} NaN or "
            f"infinite values{agree(bad.size, '', ' (this is the first)')}"
        )
    scale = np.abs(v).max(axis=1, initial=0.0)
    zero = np.flatnonzero(scale == 0)
    if zero.size:
        raise InputError(
            f"{locate(int(zero[0]))}: {plural(zero.size, 'vector')} {agree(zero.size, 'is', 'are')} all "
            f"zeros{agree(zero.size, '', ' (this is the first)')}: "
            "a zero vector has no direction, its cosine is undefined"
        )
    v /= scale[:, None]
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    return np.ascontiguousarray(v, dtype=np.float32)


def from_arrays(
    model: str,
    doc_ids: Sequence[str],
    doc_vectors: np.ndarray,
    query_ids: Sequence[str],
    query_vectors: np.ndarray,
    sources: tuple[str, str] = ("documents", "questions"),
    locate: tuple[Callable[[int], str], Callable[[int], str]] | None = None,
) -> Embeddings:
    """Embeddings from ids and vectors, checked: unique ids, real finite non-zero vectors of one width (unit rows).

    `locate[i](row)` says where a row of side i (documents, questions) came from; by default its source and row.
    """
    if locate is None:
        locate = tuple(
            (lambda r, s=s, ids=ids: f"{s}: row {r + 1} (id {ids[r]!r})")
            for s, ids in zip(sources, (doc_ids, query_ids))
        )
    d_ids = _unique_ids(list(doc_ids), locate[0])
    q_ids = _unique_ids(list(query_ids), locate[1])
    if not d_ids:
        raise InputError(f"{sources[0]}: no document vector")
    dv = unit_rows(doc_vectors, d_ids, sources[0], locate[0])
    qv = np.asarray(query_vectors)
    if q_ids and qv.ndim == 2 and qv.shape[1] != dv.shape[1]:
        raise InputError(
            f"{sources[1]}: the question vectors have {qv.shape[1]} dimensions, "
            f"the document vectors ({sources[0]}) {dv.shape[1]}"
        )
    qv = unit_rows(qv.reshape(0, dv.shape[1]) if not q_ids and qv.size == 0 else qv, q_ids, sources[1], locate[1])
    return Embeddings(str(model), d_ids, dv, q_ids, qv, (), sources)


# --------------------------------------------------------------------------------------------- .npz


def _npz_header(zf: zipfile.ZipFile, info: zipfile.ZipInfo, where: str) -> tuple[tuple[int, ...], np.dtype]:
    """An .npy member's declared shape and dtype, read from its header alone (nothing else is decompressed); an
    object dtype is refused."""
    readers = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
    try:
        with zf.open(info) as f:
            version = np.lib.format.read_magic(f)
            if version not in readers:
                raise EOFError(f".npy format version {version[0]}.{version[1]} is not supported, 1.0 and 2.0 are")
            shape, _, dtype = readers[version](f)
    except (ValueError, EOFError, OSError, zipfile.BadZipFile) as e:
        raise InputError(f"{where}: not a readable .npy array ({e})") from None
    if dtype.hasobject:
        raise InputError(
            f"{where}: holds Python objects (dtype {dtype}), not numbers or strings; save it with a numeric dtype"
        )
    return shape, dtype


NPZ_SIDES = {"doc_ids": DOCUMENTS, "doc_vectors": DOCUMENTS, "query_ids": QUESTIONS, "query_vectors": QUESTIONS}


def _check_npz_member(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, where: str, limits: Limits, upload: _Upload
) -> None:
    """An .npz member checked from its zip entry and its array header alone: its rows (the side's limit), its
    width (a vectors array) and its bytes (the larger of what the zip entry and the header declare, added to the
    upload's)."""
    _check_size(info.file_size, where)
    shape, dtype = _npz_header(zf, info, where)
    if name in NPZ_SIDES and len(shape) >= 1:
        limits.check_rows(NPZ_SIDES[name], int(shape[0]), where)
    if name.endswith("_vectors") and len(shape) == 2:
        check_width(int(shape[1]), where)
    upload.add(max(info.file_size, int(np.prod(shape, dtype=object)) * dtype.itemsize), where)


def _ids_of(values: np.ndarray, where: str) -> list[str]:
    """An id array (1-D, strings or integers) as strings."""
    if values.ndim != 1:
        raise InputError(f"{where}: ids must be a 1-D array, found shape {values.shape}")
    if values.dtype.kind == "U":
        return values.tolist()
    if values.dtype.kind == "S":
        try:
            return [v.decode("utf-8") for v in values.tolist()]
        except UnicodeDecodeError:
            raise InputError(f"{where}: ids are bytes that are not UTF-8 text") from None
    if values.dtype.kind in "iu":
        return [str(v) for v in values.tolist()]
    raise InputError(f"{where}: ids must be strings or integers, found dtype {values.dtype}")


def load_npz(data: bytes, source: str, limits: Limits = Limits()) -> Embeddings:
    """Embeddings from an .npz with arrays doc_ids, doc_vectors, query_ids, query_vectors (and optionally model).

    Every member is checked from its zip entry and its array header (rows against `limits`, width against MAX_DIM,
    the bytes of all of them together against MAX_BYTES) before any is read.
    The model is the `model` array's string, else the file's name.
    """
    _check_size(len(data), source)
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except zipfile.BadZipFile:
        raise InputError(f"{source}: not an .npz file (not a zip archive)") from None
    infos = {PurePosixPath(i.filename).name.removesuffix(".npy"): i for i in zf.infolist() if not i.is_dir()}
    missing = [n for n in NPZ_ARRAYS if n not in infos]
    if missing:
        raise InputError(
            f"{source}: no array {missing[0]!r} (an .npz needs {', '.join(NPZ_ARRAYS)}; "
            f"found: {', '.join(sorted(infos)) or 'nothing'})"
        )
    wanted = [n for n in (*NPZ_ARRAYS, "model") if n in infos]
    upload = _Upload(" as its arrays' headers declare")
    for name in wanted:
        _check_npz_member(zf, infos[name], name, f"{source}: array {name}", limits, upload)
    arrays = {}
    for name in wanted:
        where = f"{source}: array {name}"
        try:
            with zf.open(infos[name]) as f:
                arrays[name] = np.load(f, allow_pickle=False)
        except (ValueError, EOFError, OSError, zipfile.BadZipFile) as e:
            raise InputError(f"{where}: damaged ({e})") from None
    model = PurePosixPath(source).stem
    if "model" in arrays:
        m = arrays["model"]
        if m.dtype.kind != "U" or m.size != 1:
            raise InputError(f"{source}: array model must be one string, found dtype {m.dtype} and shape {m.shape}")
        model = str(m.reshape(()))
    d_ids = _ids_of(arrays["doc_ids"], f"{source}: array doc_ids")
    q_ids = _ids_of(arrays["query_ids"], f"{source}: array query_ids")
    return from_arrays(
        model,
        d_ids,
        arrays["doc_vectors"],
        q_ids,
        arrays["query_vectors"],
        (f"{source}: array doc_vectors", f"{source}: array query_vectors"),
    )


# --------------------------------------------------------------------------------------------- JSONL


def _jsonl_side(
    data: bytes, source: str, side: int, limits: Limits, values: _Upload
) -> tuple[list[str], np.ndarray, list[int]]:
    """Ids, vectors (rows x dim, float64) and line numbers of a JSONL vectors file (its text's size checked by the
    caller); each line's width (MAX_DIM), the rows (`limits`) and the values read (8 bytes each, added to
    `values`) are checked as it is parsed."""
    ids, rows, lines = [], [], []
    width = None
    for n, rec in json_objects(data, source):
        limits.check_rows(side, len(ids) + 1, f"{source}:{n}")
        rid = rec.get("id", rec.get("_id"))
        if not isinstance(rid, (str, int)) or isinstance(rid, bool):
            raise InputError(f"{source}:{n}: no 'id' field (a string or an integer)")
        vec = rec.get("vector")
        if not isinstance(vec, list):
            raise InputError(f"{source}:{n}: no 'vector' field (a list of numbers)")
        check_width(len(vec), f"{source}:{n}")
        values.add(8 * len(vec), f"{source}:{n}")
        try:
            row = np.array(vec)
        except ValueError:
            row = np.array(vec, dtype=object)
        if row.ndim != 1 or row.dtype.kind not in _REAL:
            raise InputError(f"{source}:{n}: 'vector' must be a flat list of numbers")
        if width is None:
            width = (row.size, n)
        elif row.size != width[0]:
            raise InputError(f"{source}:{n}: the vector has {row.size} values, line {width[1]}'s has {width[0]}")
        ids.append(str(rid))
        rows.append(row.astype(np.float64))
        lines.append(n)
    vectors = np.vstack(rows) if rows else np.zeros((0, 0))
    return ids, vectors, lines


def load_jsonl(
    docs_data: bytes,
    docs_source: str,
    queries_data: bytes,
    queries_source: str,
    model: str | None = None,
    limits: Limits = Limits(),
) -> Embeddings:
    """Embeddings from two JSONL files (documents, questions), each line {"id": ..., "vector": [...]}.

    The two texts together are at most MAX_BYTES, and so are the values read from them (8 bytes each); each line's
    width and each side's rows are checked as it is parsed. The model is `model`, else the documents file's name."""
    text = _Upload(" of text")
    text.add(len(docs_data), docs_source)
    text.add(len(queries_data), queries_source)
    values = _Upload(" of values read (8 bytes each)")
    sides = [
        _jsonl_side(docs_data, docs_source, DOCUMENTS, limits, values),
        _jsonl_side(queries_data, queries_source, QUESTIONS, limits, values),
    ]

    def at(source: str, ids: list[str], lines: list[int]) -> Callable[[int], str]:
        return lambda r: f"{source}:{lines[r]} (id {ids[r]!r})"

    return from_arrays(
        model or PurePosixPath(docs_source).stem,
        sides[0][0],
        sides[0][1],
        sides[1][0],
        sides[1][1],
        (docs_source, queries_source),
        tuple(at(s, ids, lines) for s, (ids, _, lines) in zip((docs_source, queries_source), sides)),
    )


# --------------------------------------------------------------------------------------------- Parquet


def _parquet_declared(pf, source: str, side: int, limits: Limits, upload: _Upload) -> None:
    """A Parquet file checked from its footer alone, before any column is read: the columns id and vector and their
    types, the rows (`limits`), the vector width (a fixed-size list's size, else the values per row the vector
    column declares), and the bytes its columns take once decoded (values at 8 bytes, ids as declared
    uncompressed), added to the upload's."""
    import pyarrow as pa

    schema = pf.schema_arrow
    if "id" not in schema.names or "vector" not in schema.names:
        raise InputError(f"{source}: the columns must include id and vector (found: {', '.join(schema.names)})")
    for name in ("id", "vector"):
        if schema.names.count(name) > 1:
            raise InputError(f"{source}: the column {name} appears {schema.names.count(name)} times; keep one")
    id_type, t = schema.field("id").type, schema.field("vector").type
    if not (pa.types.is_string(id_type) or pa.types.is_large_string(id_type) or pa.types.is_integer(id_type)):
        raise InputError(f"{source}: column id must hold strings or integers, found {id_type}")
    if not (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)):
        raise InputError(f"{source}: column vector must hold lists of numbers, found {t}")
    if not (pa.types.is_integer(t.value_type) or pa.types.is_floating(t.value_type)):
        raise InputError(f"{source}: column vector must hold lists of real numbers, found lists of {t.value_type}")
    meta = pf.metadata
    rows = meta.num_rows
    limits.check_rows(side, rows, source)
    if pa.types.is_fixed_size_list(t):
        check_width(t.list_size, f"{source}: column vector")
    paths = [meta.schema.column(i).path for i in range(meta.num_columns)]
    leaves = [i for i, path in enumerate(paths) if path.split(".")[0] == "vector"]
    chunks = [meta.row_group(g) for g in range(meta.num_row_groups)]
    values = sum(g.column(i).num_values for g in chunks for i in leaves)
    if values > rows * MAX_DIM:
        raise InputError(
            f"{source}: column vector declares {values:,} values for {_plural(rows, 'row')}, more than "
            f"{MAX_DIM:,} a row: vectors above the {MAX_DIM:,} limit (embeddings.MAX_DIM)"
        )
    ids = sum(g.column(i).total_uncompressed_size for g in chunks for i, path in enumerate(paths) if path == "id")
    upload.add(max(8 * values + ids, sum(g.total_byte_size for g in chunks)), f"{source} decoded")


def _parquet_side(data: bytes, source: str, side: int, limits: Limits, upload: _Upload) -> tuple[list[str], np.ndarray]:
    """Ids and vectors of a Parquet file with the columns id and vector (its footer checked first:
    `_parquet_declared`)."""
    try:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq
    except ImportError:
        raise InputError(
            f"{source}: reading Parquet needs pyarrow, which is not installed; use .npz or JSONL"
        ) from None
    _check_size(len(data), source)
    try:
        pf = pq.ParquetFile(io.BytesIO(data))
        _parquet_declared(pf, source, side, limits, upload)
        table = pf.read(columns=["id", "vector"])
    except (pa.ArrowException, OSError) as e:
        raise InputError(f"{source}: not a readable Parquet file ({e})") from None
    ids_col, vec_col = table.column("id"), table.column("vector")
    limits.check_rows(side, len(ids_col), source)
    for name, col in (("id", ids_col), ("vector", vec_col)):
        if col.null_count:
            first = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
            raise InputError(f"{source}: row {first + 1}: column {name} is empty (null)")
    ids = [str(v) for v in ids_col.to_pylist()]
    lengths = pc.list_value_length(vec_col).to_numpy(zero_copy_only=False)
    if lengths.size and lengths.max() > MAX_DIM:
        r = int(np.argmax(lengths))
        check_width(int(lengths[r]), f"{source}: row {r + 1} (id {ids[r]!r})")
    if lengths.size and (lengths != lengths[0]).any():
        r = int(np.flatnonzero(lengths != lengths[0])[0])
        raise InputError(
            f"{source}: row {r + 1} (id {ids[r]!r}): the vector has {lengths[r]} values, row 1's has {lengths[0]}"
        )
    flat = pc.list_flatten(vec_col)
    if flat.null_count:
        raise InputError(f"{source}: a vector holds an empty (null) value")
    values = flat.to_numpy().astype(np.float64) if len(flat) else np.zeros(0)
    return ids, values.reshape(len(ids), int(lengths[0]) if lengths.size else 0)


def load_parquet(
    docs_data: bytes,
    docs_source: str,
    queries_data: bytes,
    queries_source: str,
    model: str | None = None,
    limits: Limits = Limits(),
) -> Embeddings:
    """Embeddings from two Parquet files (documents, questions) with the columns id and vector (needs pyarrow).

    Each file's footer is checked before its columns are read: rows against `limits`, width against MAX_DIM, the
    bytes both decode to together against MAX_BYTES. The model is `model`, else the documents file's name."""
    upload = _Upload(" as the footers declare")
    (d_ids, dv), (q_ids, qv) = (
        _parquet_side(docs_data, docs_source, DOCUMENTS, limits, upload),
        _parquet_side(queries_data, queries_source, QUESTIONS, limits, upload),
    )
    return from_arrays(model or PurePosixPath(docs_source).stem, d_ids, dv, q_ids, qv, (docs_source, queries_source))


FORMS = "one .npz file, or two .jsonl (or two .parquet) files: the documents' then the questions'"


def loader_for(names: Sequence[str]) -> Callable:
    """The loader of files so named (load_npz for one .npz; load_jsonl or load_parquet for two of that kind), or an
    InputError naming the files and the forms accepted, before anything is read."""
    if len(names) == 1 and names[0].endswith(".npz"):
        return load_npz
    for ext, load in ((".jsonl", load_jsonl), (".parquet", load_parquet)):
        if len(names) == 2 and all(n.endswith(ext) for n in names):
            return load
    raise InputError(f"{', '.join(names) or 'no file'}: give {FORMS}")


def load_files(files: Sequence[tuple[str, bytes]], limits: Limits = Limits()) -> Embeddings:
    """Embeddings from (file name, bytes): one .npz, or the documents' and the questions' files, in that order;
    `limits`: the most vectors of each side (`Limits.of(dataset)` for the dataset they are for)."""
    load = loader_for([name for name, _ in files])
    return load(*(part for name, data in files for part in (data, name)), limits=limits)
