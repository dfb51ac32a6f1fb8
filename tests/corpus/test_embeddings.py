"""Precomputed embeddings: the three formats read the same content, every bad input is one message naming the
file (and line or array), memory is bounded before decompression, and alignment follows the dataset's order."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest

from retrieval.core.errors import InputError
from retrieval.corpus import embeddings as emb
from retrieval.corpus.dataset import assemble

DIM = 6


@pytest.fixture(scope="module")
def small():
    docs = [(f"d{i}", f"text {i}") for i in range(5)]
    return assemble("small", docs, [("q1", "one"), ("q2", "two"), ("q3", "three")], [("q1", "d1", 1), ("q2", "d3", 2)])


def vectors(n, seed=0):
    return np.random.default_rng(seed).normal(size=(n, DIM))


def npz_bytes(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def good_arrays(**change):
    arrays = dict(
        doc_ids=np.array(["d4", "d0", "d2", "d1", "d3"]),
        doc_vectors=vectors(5),
        query_ids=np.array(["q2", "q1", "q3"]),
        query_vectors=vectors(3, 1),
    )
    arrays.update(change)
    return arrays


def jsonl(ids, vecs) -> bytes:
    return "".join(json.dumps({"id": i, "vector": list(map(float, v))}) + "\n" for i, v in zip(ids, vecs)).encode()


def test_npz_is_read_checked_and_scaled_to_unit_rows():
    a = good_arrays()
    e = emb.load_npz(npz_bytes(**a, model=np.str_("e5-test")), "vecs.npz")
    assert (e.model, e.doc_ids, e.query_ids, e.dim) == (
        "e5-test",
        ("d4", "d0", "d2", "d1", "d3"),
        ("q2", "q1", "q3"),
        DIM,
    )
    assert e.doc_vectors.dtype == np.float32 and e.query_vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(e.doc_vectors, axis=1), 1.0, atol=1e-6)
    want = a["doc_vectors"] / np.linalg.norm(a["doc_vectors"], axis=1, keepdims=True)
    np.testing.assert_allclose(e.doc_vectors, want, atol=1e-7)
    assert emb.load_npz(npz_bytes(**a), "vecs.npz").model == "vecs"  # no model array: the file's name


def test_the_three_formats_read_the_same_content():
    a = good_arrays()
    from_npz = emb.load_npz(npz_bytes(**a), "e.npz")
    from_jsonl = emb.load_jsonl(
        jsonl(a["doc_ids"], a["doc_vectors"]), "e.jsonl", jsonl(a["query_ids"], a["query_vectors"]), "q.jsonl"
    )
    pa = pytest.importorskip("pyarrow")  # Streamlit installs it
    import pyarrow.parquet as pq

    def parquet(ids, vecs) -> bytes:
        buf = io.BytesIO()
        pq.write_table(pa.table({"id": list(ids), "vector": [list(v) for v in vecs]}), buf)
        return buf.getvalue()

    from_parquet = emb.load_parquet(
        parquet(a["doc_ids"], a["doc_vectors"]), "e.parquet", parquet(a["query_ids"], a["query_vectors"]), "q.parquet"
    )
    assert from_npz.fingerprint == from_jsonl.fingerprint == from_parquet.fingerprint
    changed = emb.load_npz(npz_bytes(**good_arrays(doc_vectors=vectors(5) + np.eye(5, DIM) * 1e-3)), "e.npz")
    assert changed.fingerprint != from_npz.fingerprint


def test_align_puts_vectors_in_dataset_order_and_warns_about_extra_ids_and_missing_questions(small):
    a = good_arrays(
        doc_ids=np.array(["d4", "d0", "d2", "d1", "d3", "zz", "yy"]),
        doc_vectors=vectors(7),
        query_ids=np.array(["q2", "q9"]),
        query_vectors=vectors(2, 1),
    )
    e = emb.load_npz(npz_bytes(**a), "vecs.npz")
    al = emb.align(e, small)
    order = [list(a["doc_ids"]).index(d) for d in small.doc_ids]
    np.testing.assert_array_equal(al.doc_vectors, e.doc_vectors[order])
    np.testing.assert_array_equal(al.query_vectors[1], e.query_vectors[0])  # q2
    assert al.has_query.tolist() == [False, True, False]
    assert not al.query_vectors[0].any() and not al.query_vectors[2].any()
    assert al.dataset_fingerprint == small.fingerprint and al.fingerprint == e.fingerprint
    assert al.warnings == (
        "vecs.npz: array doc_vectors: 2 document vectors name ids that are not in the dataset ('zz', 'yy'); they are left out",
        "vecs.npz: array query_vectors: 1 question vectors name ids that are not in the dataset ('q9'); they are left out",
        "vecs.npz: array query_vectors: 2 of the dataset's 3 questions have no vector ('q1', 'q3'); they score nothing",
    )


def test_a_document_without_a_vector_is_refused(small):
    e = emb.load_npz(npz_bytes(**good_arrays(doc_ids=np.array(["d4", "d0", "x", "y", "d3"]))), "vecs.npz")
    with pytest.raises(InputError) as err:
        emb.align(e, small)
    assert str(err.value) == (
        "vecs.npz: array doc_vectors: 2 of the dataset's 5 documents have no vector (first: 'd1'); "
        "a document without a vector cannot be ranked"
    )


def _bad_values():
    nan, zero = vectors(5), vectors(5)
    nan[2, 1], nan[4, 0] = np.nan, np.inf
    zero[1] = zero[3] = 0.0
    return nan, zero


NAN, ZERO = _bad_values()


@pytest.mark.parametrize(
    "change, message",
    [
        (
            dict(query_vectors=vectors(3)[:, :4]),
            "v.npz: array query_vectors: the question vectors have 4 dimensions, the document vectors (v.npz: array doc_vectors) 6",
        ),
        (
            dict(doc_vectors=NAN),
            "v.npz: array doc_vectors: row 3 (id 'd2'): 2 vectors hold NaN or infinite values (this is the first)",
        ),
        (
            dict(doc_vectors=ZERO),
            "v.npz: array doc_vectors: row 2 (id 'd0'): 2 vectors are all zeros (this is the first): "
            "a zero vector has no direction, its cosine is undefined",
        ),
        (
            dict(doc_ids=np.array(["d4", "d0", "d2", "d0", "d3"])),
            "v.npz: array doc_vectors: row 4 (id 'd0'): duplicate id 'd0' (first at v.npz: array doc_vectors: row 2 (id 'd0'))",
        ),
        (
            dict(doc_vectors=vectors(5).astype(np.complex128)),
            "v.npz: array doc_vectors: vectors must be real numbers, found dtype complex128",
        ),
        (
            dict(doc_vectors=vectors(5).astype(str)),
            "v.npz: array doc_vectors: vectors must be real numbers, found dtype <U32",
        ),
        (dict(doc_vectors=vectors(5) > 0), "v.npz: array doc_vectors: vectors must be real numbers, found dtype bool"),
        (
            dict(doc_vectors=vectors(5).ravel()[:5]),
            "v.npz: array doc_vectors: vectors must be a 2-D array (one row per id), found shape (5,)",
        ),
        (
            dict(doc_vectors=vectors(10).reshape(5, 2, DIM)),
            "v.npz: array doc_vectors: vectors must be a 2-D array (one row per id), found shape (5, 2, 6)",
        ),
        (dict(doc_vectors=vectors(4)), "v.npz: array doc_vectors: 4 vectors for 5 ids"),
        (dict(doc_ids=np.arange(5.0)), "v.npz: array doc_ids: ids must be strings or integers, found dtype float64"),
        (
            dict(query_ids=np.array([["q1", "q2", "q3"]])),
            "v.npz: array query_ids: ids must be a 1-D array, found shape (1, 3)",
        ),
    ],
)
def test_bad_npz_arrays_are_one_message_naming_the_file_and_array(change, message):
    with pytest.raises(InputError) as err:
        emb.load_npz(npz_bytes(**good_arrays(**change)), "v.npz")
    assert str(err.value) == message


def test_integer_ids_and_integer_vectors_are_accepted():
    e = emb.load_npz(
        npz_bytes(**good_arrays(doc_ids=np.arange(5), doc_vectors=np.arange(1, 31).reshape(5, DIM))), "v.npz"
    )
    assert e.doc_ids == ("0", "1", "2", "3", "4") and e.doc_vectors.dtype == np.float32


def test_an_object_array_is_refused_without_unpickling():
    data = npz_bytes(**good_arrays(doc_vectors=np.array([[1.0] * DIM] * 5, dtype=object)))
    with pytest.raises(InputError) as err:
        emb.load_npz(data, "v.npz")
    assert str(err.value).startswith("v.npz: array doc_vectors: holds Python objects (dtype object)")


@pytest.mark.parametrize(
    "data, message",
    [
        (b"not a zip", "v.npz: not an .npz file (not a zip archive)"),
        (
            npz_bytes(doc_ids=np.array(["a"]), doc_vectors=vectors(1)),
            "v.npz: no array 'query_ids' (an .npz needs doc_ids, doc_vectors, query_ids, query_vectors; found: doc_ids, doc_vectors)",
        ),
    ],
)
def test_not_an_npz_or_an_array_missing(data, message):
    with pytest.raises(InputError) as err:
        emb.load_npz(data, "v.npz")
    assert str(err.value) == message


def test_a_large_member_is_refused_from_its_declared_size_before_it_is_decompressed(monkeypatch):
    buf = io.BytesIO()
    np.savez_compressed(
        buf, **good_arrays(doc_ids=np.array([f"d{i}" for i in range(20_000)]), doc_vectors=np.ones((20_000, DIM)))
    )
    data = buf.getvalue()
    monkeypatch.setattr(emb, "MAX_BYTES", 200_000)
    assert len(data) < emb.MAX_BYTES  # the file itself is small: it is the member that would expand
    loads = []
    monkeypatch.setattr(np, "load", lambda *a, **k: loads.append(a) or pytest.fail("decompressed"))
    with pytest.raises(InputError) as err:
        emb.load_npz(data, "big.npz")
    assert str(err.value) == "big.npz: array doc_ids is 0.5 MB, above the 0.2 MB limit (embeddings.MAX_BYTES)"
    assert loads == []


def test_an_array_header_declaring_more_than_the_limit_is_refused_before_reading():
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": (10**9, 384)})
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, arr in good_arrays().items():
            if name != "doc_vectors":
                with z.open(f"{name}.npy", "w") as f:
                    np.save(f, arr)
        z.writestr("doc_vectors.npy", b"\x93NUMPY\x01\x00" + header.getvalue()[8:] + b"\x00" * 64)
    with pytest.raises(InputError) as err:
        emb.load_npz(buf.getvalue(), "lie.npz")
    assert (
        str(err.value)
        == "lie.npz: array doc_vectors is 1,464,843.8 MB, above the 1,024.0 MB limit (embeddings.MAX_BYTES)"
    )


def test_a_large_jsonl_file_is_refused(monkeypatch):
    monkeypatch.setattr(emb, "MAX_BYTES", 100)
    with pytest.raises(InputError) as err:
        emb.load_jsonl(jsonl(["a", "b"], vectors(2)), "docs.jsonl", b"", "q.jsonl")
    assert str(err.value).startswith("docs.jsonl is 0.0 MB, above the 0.0 MB limit")


@pytest.mark.parametrize(
    "lines, message",
    [
        (
            ['{"id": "a", "vector": [1, 2]}', '{"id": "b", "vector": [1, 2, 3]}'],
            "docs.jsonl:2: the vector has 3 values, line 1's has 2",
        ),
        (
            ['{"id": "a", "vector": [1, 2]}', "", '{"id": "b", "vector": [1, "x"]}'],
            "docs.jsonl:3: 'vector' must be a flat list of numbers",
        ),
        (['{"id": "a", "vector": [[1], [2]]}'], "docs.jsonl:1: 'vector' must be a flat list of numbers"),
        (['{"id": "a", "vector": [1, NaN]}'], "docs.jsonl:1 (id 'a'): 1 vector holds NaN or infinite values"),
        (
            ['{"id": "a", "vector": [1, 2]}', '{"id": "b", "vector": [0, 0]}'],
            "docs.jsonl:2 (id 'b'): 1 vector is all zeros: a zero vector has no direction, its cosine is undefined",
        ),
        (
            ['{"id": "a", "vector": [1, 2]}', '{"id": "a", "vector": [2, 1]}'],
            "docs.jsonl:2 (id 'a'): duplicate id 'a' (first at docs.jsonl:1 (id 'a'))",
        ),
        (['{"id": "a", "vector": [1, 2]'], "docs.jsonl:1: broken JSON (Expecting ',' delimiter at column 29)"),
        (['{"id": "a", "vec": [1, 2]}'], "docs.jsonl:1: no 'vector' field (a list of numbers)"),
        (['{"vector": [1, 2]}'], "docs.jsonl:1: no 'id' field (a string or an integer)"),
        ([], "docs.jsonl: no document vector"),
    ],
)
def test_bad_jsonl_is_one_message_naming_the_file_and_line(lines, message):
    with pytest.raises(InputError) as err:
        emb.load_jsonl("\n".join(lines).encode(), "docs.jsonl", b'{"id": "q", "vector": [1, 1]}\n', "q.jsonl")
    assert str(err.value) == message


def test_an_empty_questions_file_means_every_question_scores_nothing(small):
    e = emb.load_jsonl(jsonl([f"d{i}" for i in range(5)], vectors(5)), "d.jsonl", b"", "q.jsonl")
    assert e.query_vectors.shape == (0, DIM)
    al = emb.align(e, small)
    assert not al.has_query.any() and al.warnings[-1].startswith(
        "q.jsonl: 3 of the dataset's 3 questions have no vector"
    )


def test_bad_parquet_is_one_message_naming_the_file():
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    def parquet(table) -> bytes:
        buf = io.BytesIO()
        pq.write_table(table, buf)
        return buf.getvalue()

    q = parquet(pa.table({"id": ["q"], "vector": [[1.0, 2.0]]}))
    cases = [
        (
            parquet(pa.table({"id": ["a", "b"], "vector": [[1.0, 2.0], [1.0]]})),
            "d.parquet: row 2 (id 'b'): the vector has 1 values, row 1's has 2",
        ),
        (
            parquet(pa.table({"id": ["a"], "emb": [[1.0, 2.0]]})),
            "d.parquet: the columns must include id and vector (found: id, emb)",
        ),
        (
            parquet(pa.table({"id": ["a"], "vector": [["x", "y"]]})),
            "d.parquet: column vector must hold lists of real numbers, found lists of string",
        ),
        (
            parquet(pa.table({"id": ["a", None], "vector": [[1.0], [2.0]]})),
            "d.parquet: row 2: column id is empty (null)",
        ),
        (
            parquet(
                pa.Table.from_arrays(
                    [pa.array(["a"]), pa.array(["b"]), pa.array([[1.0]])], names=["id", "id", "vector"]
                )
            ),
            "d.parquet: the column id appears 2 times; keep one",
        ),
        (b"PAR1 nonsense", None),
    ]
    for data, message in cases:
        with pytest.raises(InputError) as err:
            emb.load_parquet(data, "d.parquet", q, "q.parquet")
        if message is None:
            assert str(err.value).startswith("d.parquet: not a readable Parquet file")
        else:
            assert str(err.value) == message


def test_the_files_kinds_pick_their_loader_and_anything_else_is_refused_by_name():
    from retrieval.corpus import embeddings as emb

    assert emb.loader_for(["v.npz"]) is emb.load_npz
    assert emb.loader_for(["d.jsonl", "q.jsonl"]) is emb.load_jsonl
    assert emb.loader_for(["d.parquet", "q.parquet"]) is emb.load_parquet
    for names in (["d.jsonl", "q.parquet"], ["a.npz", "b.npz"], ["d.jsonl"], [], ["v.csv"]):
        with pytest.raises(InputError, match="give one .npz file") as e:
            emb.loader_for(names)
        assert all(n in str(e.value) for n in names)


# ------------------------------------------------------------------ bounded by what they can mean, from headers


def npy_header(shape, descr="<f4") -> bytes:
    """An .npy header (format 1.0) declaring `shape`, with no data after it."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return b"\x93NUMPY\x01\x00" + buf.getvalue()[8:]


def lying_npz(doc_shape, query_shape, n_docs=28, n_queries=14) -> bytes:
    """An .npz with real id arrays and vector arrays whose headers declare these shapes over a 64-byte body."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, arr in (
            ("doc_ids", np.array([f"d{i}" for i in range(n_docs)])),
            ("query_ids", np.array([f"q{i}" for i in range(n_queries)])),
        ):
            with z.open(f"{name}.npy", "w") as f:
                np.save(f, arr)
        z.writestr("doc_vectors.npy", npy_header(doc_shape) + b"\x00" * 64)
        z.writestr("query_vectors.npy", npy_header(query_shape) + b"\x00" * 64)
    return buf.getvalue()


@pytest.fixture
def nothing_read(monkeypatch):
    """np.load fails the test if called: a refusal must come from the headers alone."""
    monkeypatch.setattr(np, "load", lambda *a, **k: pytest.fail("an array was read"))


def test_the_28_by_9_million_npz_is_refused_from_its_headers_without_allocating(nothing_read):
    """The issue's file: 28 x 9,000,000 and 14 x 9,000,000 float32 declared (1.5 GB) in a small zip, each member
    under MAX_BYTES: refused by its width, naming the array and the limit, with nothing allocated."""
    import tracemalloc

    from retrieval.corpus.dataset import load

    data = lying_npz((28, 9_000_000), (14, 9_000_000))
    assert len(data) < 10_000
    tracemalloc.start()
    try:
        with pytest.raises(InputError) as err:
            emb.load_files([("wide.npz", data)], emb.Limits.of(load("invented")))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (
        str(err.value)
        == "wide.npz: array doc_vectors: vectors of 9,000,000 dimensions, above the 4,096 limit (embeddings.MAX_DIM)"
    )
    assert peak < 5 * 2**20  # numpy reports its allocations to tracemalloc: the 1 GB array was never made


def test_the_limit_is_on_the_whole_upload_not_on_each_member(nothing_read):
    """Each vector array under MAX_BYTES (800 and 400 MB declared), both together above it: refused at the second."""
    data = lying_npz((200_000, 1024), (100_000, 1024))
    with pytest.raises(InputError) as err:
        emb.load_npz(data, "two.npz")
    assert str(err.value) == (
        "two.npz: array query_vectors (390.6 MB) brings the upload to 1,171.9 MB as its arrays' "
        "headers declare, above the 1,024.0 MB limit of one upload (embeddings.MAX_BYTES)"
    )


@pytest.mark.parametrize(
    "limits, message",
    [
        (
            emb.Limits(27, 14),
            "rows.npz: array doc_ids: 28 rows, more than the dataset's 27 documents (one vector a document at most)",
        ),
        (
            emb.Limits(28, 1),
            "rows.npz: array query_ids: 14 rows, more than the dataset's 1 question (one vector a question at most)",
        ),
    ],
)
def test_more_rows_than_the_dataset_has_documents_or_questions_are_refused_from_the_headers(
    nothing_read, limits, message
):
    with pytest.raises(InputError) as err:
        emb.load_npz(lying_npz((28, 384), (14, 384)), "rows.npz", limits)
    assert str(err.value) == message


def test_a_vectors_header_with_more_rows_than_its_ids_is_refused_by_its_rows(nothing_read):
    with pytest.raises(InputError) as err:
        emb.load_npz(lying_npz((10**9, 384), (14, 384)), "lie.npz", emb.Limits(28, 14))
    assert str(err.value) == (
        "lie.npz: array doc_vectors: 1,000,000,000 rows, more than the dataset's 28 documents "
        "(one vector a document at most)"
    )


def test_a_jsonl_line_too_wide_and_too_many_lines_are_refused_as_they_are_parsed():
    wide = jsonl(["a"], vectors(1)) + json.dumps({"id": "b", "vector": [1.0] * (emb.MAX_DIM + 1)}).encode() + b"\n"
    with pytest.raises(InputError) as err:
        emb.load_jsonl(wide, "docs.jsonl", b"", "q.jsonl")
    assert str(err.value) == "docs.jsonl:2: vectors of 4,097 dimensions, above the 4,096 limit (embeddings.MAX_DIM)"
    with pytest.raises(InputError) as err:
        emb.load_jsonl(
            jsonl([f"d{i}" for i in range(5)], vectors(5)),
            "docs.jsonl",
            jsonl(["q1", "q2", "q3"], vectors(3)),
            "q.jsonl",
            limits=emb.Limits(5, 2),
        )
    assert str(err.value) == "q.jsonl:3: 3 rows, more than the dataset's 2 questions (one vector a question at most)"


def test_jsonl_texts_and_values_are_bounded_per_upload(monkeypatch):
    docs, queries = jsonl(["a", "b"], vectors(2)), jsonl(["q"], vectors(1))
    monkeypatch.setattr(emb, "MAX_BYTES", len(docs) + len(queries) - 1)  # each file fits, the two together do not
    with pytest.raises(InputError) as err:
        emb.load_jsonl(docs, "docs.jsonl", queries, "q.jsonl")
    assert str(err.value).startswith(
        "q.jsonl (0.0 MB) brings the upload to 0.0 MB of text, above the 0.0 MB limit of one "
        "upload (embeddings.MAX_BYTES)"
    )
    zeros = b"".join(b'{"id": "%d", "vector": [%s]}\n' % (i, b",".join([b"1"] * 100)) for i in range(4))
    monkeypatch.setattr(emb, "MAX_BYTES", len(zeros) * 2)  # the text fits; 400 values at 8 bytes do not
    with pytest.raises(InputError) as err:
        emb.load_jsonl(zeros, "docs.jsonl", b"", "q.jsonl")
    assert str(err.value).startswith("docs.jsonl:3 (0.0 MB) brings the upload to 0.0 MB of values read (8 bytes each)")


def parquet_of(table) -> bytes:
    import pyarrow.parquet as pq

    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


@pytest.fixture
def footer_only(monkeypatch):
    """Reading a Parquet file's columns fails the test: a refusal must come from its footer alone."""
    pq = pytest.importorskip("pyarrow.parquet")
    monkeypatch.setattr(pq.ParquetFile, "read", lambda *a, **k: pytest.fail("columns were read"))


def test_a_too_wide_parquet_is_refused_from_its_footer(footer_only):
    import pyarrow as pa

    q = parquet_of(pa.table({"id": ["q"], "vector": [[1.0, 2.0]]}))
    fixed = pa.table({"id": ["a", "b"], "vector": pa.array([[1.0] * 5000] * 2, type=pa.list_(pa.float32(), 5000))})
    with pytest.raises(InputError) as err:
        emb.load_parquet(parquet_of(fixed), "d.parquet", q, "q.parquet")
    assert (
        str(err.value)
        == "d.parquet: column vector: vectors of 5,000 dimensions, above the 4,096 limit (embeddings.MAX_DIM)"
    )
    varying = pa.table({"id": ["a", "b"], "vector": [[1.0] * 5000] * 2})
    with pytest.raises(InputError) as err:
        emb.load_parquet(parquet_of(varying), "d.parquet", q, "q.parquet")
    assert str(err.value) == (
        "d.parquet: column vector declares 10,000 values for 2 rows, more than 4,096 a row: "
        "vectors above the 4,096 limit (embeddings.MAX_DIM)"
    )


def test_a_parquet_with_more_rows_than_documents_or_questions_is_refused_from_its_footer(monkeypatch):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    reads = []
    read = pq.ParquetFile.read
    monkeypatch.setattr(
        pq.ParquetFile, "read", lambda self, *a, **k: reads.append(self.metadata.num_rows) or read(self, *a, **k)
    )
    d = parquet_of(pa.table({"id": ["a", "b"], "vector": [[1.0, 2.0], [2.0, 1.0]]}))
    q = parquet_of(pa.table({"id": ["q1", "q2", "q3"], "vector": [[1.0, 2.0]] * 3}))
    with pytest.raises(InputError) as err:
        emb.load_parquet(d, "d.parquet", q, "q.parquet", limits=emb.Limits(1, 3))
    assert str(err.value) == "d.parquet: 2 rows, more than the dataset's 1 document (one vector a document at most)"
    assert reads == []
    with pytest.raises(InputError) as err:
        emb.load_parquet(d, "d.parquet", q, "q.parquet", limits=emb.Limits(2, 2))
    assert str(err.value) == "q.parquet: 3 rows, more than the dataset's 2 questions (one vector a question at most)"
    assert reads == [2]  # the documents' file, within its limit, was read; the questions' was not


def test_a_parquet_row_wider_than_the_limit_among_narrow_ones_is_refused_by_its_row():
    """The footer's average is within MAX_DIM; the row read is not: refused naming it (not as rows of unequal width)."""
    import pyarrow as pa

    q = parquet_of(pa.table({"id": ["q"], "vector": [[1.0, 2.0]]}))
    d = parquet_of(pa.table({"id": ["a", "b", "c"], "vector": [[1.0, 2.0], [1.0] * 5000, [1.0, 2.0]]}))
    with pytest.raises(InputError) as err:
        emb.load_parquet(d, "d.parquet", q, "q.parquet")
    assert (
        str(err.value)
        == "d.parquet: row 2 (id 'b'): vectors of 5,000 dimensions, above the 4,096 limit (embeddings.MAX_DIM)"
    )


def test_the_shipped_vectors_of_the_invented_corpus_load_within_every_limit(tmp_path):
    """The bundled model's vectors shipped with the invented corpus (data/invented/e5-small*.npz), saved as an
    upload, load within the dataset's limits and give the same content as the bundled model's."""
    from retrieval.corpus.dataset import load
    from retrieval.retrievers import dense

    ds = load("invented")
    with np.load(dense.BUNDLED["invented"]) as docs, np.load(dense.BUNDLED_QUESTIONS["invented"]) as qs:
        dv, qv = docs["vectors"], qs["vectors"]
    assert (dv.shape, qv.shape) == ((ds.n_docs, 384), (ds.n_queries, 384))
    data = npz_bytes(
        doc_ids=np.array(ds.doc_ids),
        doc_vectors=dv,
        query_ids=np.array(ds.query_ids),
        query_vectors=qv,
        model=np.str_(dense.MODEL),
    )
    e = emb.load_files([("e5-small.npz", data)], emb.Limits.of(ds))
    assert e.fingerprint == dense.embeddings_of(ds, directory=tmp_path).fingerprint
    assert emb.align(e, ds).has_query.all()
