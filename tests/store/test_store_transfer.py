"""The whole workspace as one zip and back into an empty store: the same datasets (ids), files, runs, embeddings,
grades (raters and times), experiments, and so the same numbers; hostile or wrong zips refused with one message."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from test_store import _drop_test_databases, url  # noqa: F401 - the two databases' fixture and its cleanup

import retrieval
from retrieval.core.errors import InputError
from retrieval.corpus import dataset as datasets
from retrieval.evaluation.agreement import combine
from retrieval.store.access import Actor
from retrieval.store.transfer import INDEX, export_workspace, import_workspace
from retrieval.store.workspace import FILES, ZIP, StoredFile, open_workspace

DOCS = b"id\ttext\nd1\talpha beta\nd2\tgamma delta\nd3\talpha gamma\n"
QUERIES = b"id\ttext\nq1\talpha\nq2\tgamma\n"
QRELS = b"q1 0 d1 2\nq2 0 d2 1\n"


def filled(url_: str):
    ws = open_workspace(url_)
    inv = retrieval.load("invented")
    ws.add_dataset(inv, ZIP, [StoredFile("invented.zip", datasets.beir_zip(inv))], "ana")
    three = datasets.from_files((DOCS, "docs.tsv"), (QUERIES, "q.tsv"), (QRELS, "qrels.txt"), name="three")
    files = [StoredFile("docs.tsv", DOCS), StoredFile("q.tsv", QUERIES), StoredFile("qrels.txt", QRELS)]
    ws.add_dataset(three.renamed("class of Monday"), FILES, files, "ben")
    ws.add_run(inv.fingerprint, "mine", StoredFile("mine.run", b"q01 Q0 pricing1 1 9 x\nq01 Q0 refund1 2 3 x\n"), "ana")
    ws.add_embeddings(
        inv.fingerprint, "vectors", [StoredFile("d.npz", b"D" * 40), StoredFile("q.npz", b"Q" * 20)], "ana"
    )
    for q, d, g, r in (
        ("q01", "misc3", 2, "ana"),
        ("q01", "misc3", 0, "ben"),
        ("q02", "export1", 1, "ana"),
        ("q02", "export1", 1, "ana"),
        ("q03", "misc1", 2, "cy"),
    ):
        ws.grade(inv.fingerprint, q, d, g, r)
    ws.take_back(inv.fingerprint, "q03", "misc1", "cy", Actor("cy"))
    ws.grade(three.fingerprint, "q1", "d3", 1, "ben")
    p = retrieval.Params(k1=0.9)
    from retrieval.analyses.experiments import record

    ws.save_experiment(inv.fingerprint, "k1 0.9", record(retrieval.evaluate(inv, p, ["ndcg@5"]), p), "ana")
    return ws, inv, three


def snapshot(ws):
    """Everything a person can read back from a store, times included."""
    out = {}
    for e in ws.datasets():
        out[e.id] = {
            "entry": (e.name, e.format, e.n_docs, e.n_questions, e.n_judgements, e.size, e.added_at, e.added_by),
            "files": ws.dataset_files(e.id),
            "fingerprint": ws.load_dataset(e.id).fingerprint,
            "runs": [
                (r.name, r.file_name, r.sha256, r.added_at, r.added_by, ws.load_run_file(e.id, r.name))
                for r in ws.runs(e.id)
            ],
            "embeddings": [
                (x.name, x.added_at, x.added_by, ws.embeddings_files(e.id, x.name)) for x in ws.embeddings(e.id)
            ],
            "grades": [(g.query_id, g.doc_id, g.rater, g.grade, g.graded_at) for g in ws.grades(e.id, latest=False)],
        }
    out["experiments"] = [
        (e.dataset_id, e.name, e.created_at, e.created_by, ws.experiment(e.id)[1]) for e in ws.experiments()
    ]
    return out


def test_a_round_trip_gives_the_same_workspace_and_the_same_numbers(url, tmp_path):  # noqa: F811
    ws, inv, _ = filled(url)
    data = export_workspace(ws)
    other = open_workspace(f"sqlite:///{tmp_path / 'other.sqlite'}")
    assert import_workspace(other, data) == 2
    assert snapshot(other) == snapshot(ws)
    for store in (ws, other):  # the numbers the metrics read: the dataset with the raters' grades combined
        ds = store.load_dataset(inv.fingerprint)
        added = combine(((g.query_id, g.doc_id, g.rater, g.grade) for g in store.grades(inv.fingerprint)), "mean")
        judged = {(q, d) for q, d, _ in ds.judgements()}
        ev = retrieval.evaluate(
            ds.with_judgements((q, d, g) for (q, d), g in sorted(added.items()) if (q, d) not in judged),
            retrieval.Params(),
            ["ndcg@5", "map"],
        )
        assert (
            ev.means()
            == retrieval.evaluate(
                other.load_dataset(inv.fingerprint).with_judgements(
                    (q, d, g) for (q, d), g in sorted(added.items()) if (q, d) not in judged
                ),
                retrieval.Params(),
                ["ndcg@5", "map"],
            ).means()
        )
    with pytest.raises(InputError, match="into an empty store only"):
        import_workspace(other, data)


def test_the_export_holds_beir_folders_and_qrels_per_rater_and_combined(url):  # noqa: F811
    ws, inv, _ = filled(url)
    zf = zipfile.ZipFile(io.BytesIO(export_workspace(ws)))
    index = json.loads(zf.read(INDEX))
    entry = next(d for d in index["datasets"] if d["id"] == inv.fingerprint)
    beir = {n.split("/beir/", 1)[1]: zf.read(n) for n in zf.namelist() if n.startswith(entry["beir"] + "/")}
    rebuilt = io.BytesIO()
    with zipfile.ZipFile(rebuilt, "w") as out:
        for name, body in beir.items():
            out.writestr(name, body)
    assert datasets.load_beir_zip(rebuilt.getvalue(), "beir.zip").fingerprint == inv.fingerprint
    by_rater = {
        meta["rater"]: datasets.parse_qrels(zf.read(path), path)
        for path, meta in entry["qrels"].items()
        if "rater" in meta
    }
    assert by_rater == {"ana": [("q01", "misc3", 2), ("q02", "export1", 1)], "ben": [("q01", "misc3", 0)]}
    path = next(p for p, meta in entry["qrels"].items() if meta.get("combined_by") == "majority")
    in_use = datasets.parse_qrels(zf.read(path), path)
    assert in_use == inv.judgements() + [("q01", "misc3", 0), ("q02", "export1", 1)]  # a 2-0 tie: the lowest


def test_wrong_or_hostile_zips_are_refused_with_one_message(tmp_path):
    ws = open_workspace(f"sqlite:///{tmp_path / 'ws.sqlite'}")
    with pytest.raises(InputError, match="not a zip file"):
        import_workspace(ws, b"nope")

    def zipped(members: dict) -> bytes:
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
            for n, b in members.items():
                z.writestr(n, b)
        return buf.getvalue()

    with pytest.raises(InputError, match="does not hold"):
        import_workspace(ws, zipped({"x": b"1"}))
    with pytest.raises(InputError, match="not a workspace of this lab"):
        import_workspace(ws, zipped({INDEX: json.dumps({"format": "other", "version": 1})}))
    index = {
        "format": "retrieval-lab workspace",
        "version": 1,
        "experiments": [],
        "datasets": [
            {
                "id": "0" * 16,
                "name": "x",
                "format": ZIP,
                "added_at": "2026-01-01T00:00:00+00:00",
                "added_by": "a",
                "upload": [{"name": "../../etc/passwd", "path": "bomb"}],
                "runs": [],
                "embeddings": [],
                "grades": "g",
            }
        ],
    }
    bomb = zipped({INDEX: json.dumps(index), "bomb": b"\0" * 5_000_000})
    with pytest.raises(InputError, match="bomb"):
        import_workspace(ws, bomb, limits=datasets.ZipLimits(1_000_000, 2_000_000))
    assert ws.is_empty() and not list(tmp_path.glob("**/passwd"))
