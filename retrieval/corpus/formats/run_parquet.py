"""Parquet runs (columns qid, docid, score, or ranx's q_id, doc_id, score), read a row group at a time into the same
arrays as a TREC run; an error names the row as a text file's line."""

from __future__ import annotations

import io
from pathlib import Path, PurePosixPath

import numpy as np

from ...core.errors import InputError
from ..run_model import TIES_DEFAULT, TrecRun, _Lines
from .run_json import _check_word

_COLUMNS = (("qid", "q_id", "query_id"), ("docid", "doc_id", "docno"), ("score",))


def parse_parquet_run(
    path: Path | io.BytesIO, source: str, name: str | None = None, ties: str = TIES_DEFAULT
) -> TrecRun:
    """A Parquet run (columns qid, docid, score; or ranx's q_id, doc_id, score), read a row group at a time; an
    error names the row (the first data row is 1) as a text file's line."""
    import pyarrow as pa  # only a Parquet run needs pyarrow (a dependency of pandas)
    import pyarrow.parquet as pq

    try:
        f = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as e:
        raise InputError(f"{source}: not a readable Parquet file ({e})") from None
    names = f.schema_arrow.names
    cols = []
    for choices in _COLUMNS:
        found = next((c for c in choices if c in names), None)
        if found is None:
            raise InputError(
                f"{source}: no column {' or '.join(choices)} (a Parquet run has columns qid, docid, score; "
                f"found {', '.join(names)})"
            )
        cols.append(found)
    out = _Lines(source)
    row = 1
    try:
        for batch in f.iter_batches(columns=cols, batch_size=1 << 16):
            q, d, s = (batch.column(i) for i in range(3))
            n = batch.num_rows
            lines = np.arange(row, row + n)
            for col, what in ((q, "question id"), (d, "document id"), (s, "score")):
                if col.null_count:
                    at = int(np.argmax(col.is_null().to_numpy(zero_copy_only=False)))
                    raise InputError(f"{source}:{row + at}: the {what} is empty (null)")
            if not pa.types.is_floating(s.type) and not pa.types.is_integer(s.type):
                raise InputError(f"{source}:{row}: the score column holds {s.type}, not numbers")
            qs = [str(x).encode() for x in q.to_pylist()]
            ds = [str(x).encode() for x in d.to_pylist()]
            for ids, what in ((qs, "question"), (ds, "document")):
                bad = next((i for i, x in enumerate(ids) if x.split() != [x]), None)
                if bad is not None:
                    _check_word(ids[bad].decode(), what, source, row + bad)
            scores = s.to_numpy(zero_copy_only=False).astype(np.float64)
            out.add(qs, ds, scores, lines, [repr(x) for x in scores.tolist()] if not np.isfinite(scores).all() else [])
            row += n
    except pa.ArrowException as e:
        raise InputError(f"{source}: not a readable Parquet file ({e})") from None
    return out.run(name or PurePosixPath(source).stem, ties)
