"""The workspace store (retrieval.store.workspace) on SQLite, and on PostgreSQL where a server is given
($RETRIEVAL_LAB_TEST_DATABASE_URL, a database the tests may create databases in: .ci/run starts one).

What a teacher and a search team rely on: what is stored comes back the same (the same fingerprint, the same
numbers); a write is all or nothing, a process killed in the middle of one included; two raters grading one pair
at once both keep their grade; the size limit refuses a write and leaves the store as it was; a store this
version cannot read is one message naming it.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext

import retrieval
from conftest import ROOT
from retrieval.core.errors import InputError
from retrieval.corpus import dataset as datasets
from retrieval.store import schema
from retrieval.store.access import Actor
from retrieval.store.workspace import (
    FILES,
    MAX_BYTES_ENV,
    ZIP,
    StoredFile,
    StoreError,
    StoreFull,
    default_url,
    known_revisions,
    migrations_config,
    open_workspace,
)

ANA, BEN, ADMIN = Actor("ana"), Actor("ben"), Actor("root", admin=True)
PG_ENV = "RETRIEVAL_LAB_TEST_DATABASE_URL"
REQUIRE_PG_ENV = "RETRIEVAL_LAB_REQUIRE_POSTGRES"  # .ci/run sets it: there a missing server fails, never skips


def _postgres_database() -> str:
    """A fresh database on the test server, dropped at the end of the session."""
    admin = sa.create_engine(os.environ[PG_ENV], isolation_level="AUTOCOMMIT")
    name = f"lab_test_{uuid.uuid4().hex[:12]}"
    with admin.connect() as c:
        c.execute(sa.text(f'CREATE DATABASE "{name}"'))  # a name made here, not a user's
    _CREATED.append((admin, name))
    return str(sa.make_url(os.environ[PG_ENV]).set(database=name).render_as_string(hide_password=False))


_CREATED: list = []


@pytest.fixture(scope="session", autouse=True)
def _drop_test_databases():
    yield
    for admin, name in _CREATED:
        with admin.connect() as c:
            c.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'home' / 'workspace.sqlite'}"
    if not os.environ.get(PG_ENV):
        if os.environ.get(REQUIRE_PG_ENV):
            pytest.fail(f"{REQUIRE_PG_ENV} is set but {PG_ENV} is not: the PostgreSQL tests cannot run")
        pytest.skip(f"no PostgreSQL server given ({PG_ENV})")
    return _postgres_database()


@pytest.fixture(scope="module")
def invented():
    return retrieval.load("invented")


def _zip_file(ds) -> StoredFile:
    return StoredFile(f"{ds.name}.zip", datasets.beir_zip(ds))


def _evaluation(ds) -> dict:
    e = retrieval.evaluate(ds)
    return {s: {m: v.tolist() for m, v in by.items()} for s, by in e.values.items()}


# ------------------------------------------------------------------------------------------- what comes back


def test_a_stored_dataset_reopens_with_the_same_content_and_numbers(url, invented):
    ws = open_workspace(url)
    entry = ws.add_dataset(invented, ZIP, [_zip_file(invented)], "ana")
    assert (entry.id, entry.name, entry.n_docs, entry.n_questions) == (invented.fingerprint, "invented", 28, 14)
    assert entry.n_judgements == len(invented.qrels) and entry.added_by == "ana" and entry.size > 0
    ws.engine.dispose()
    again = open_workspace(url)  # another server, or the same after a restart
    ds = again.load_dataset(entry.id)
    assert ds.fingerprint == invented.fingerprint and ds.name == "invented"
    assert _evaluation(ds) == _evaluation(invented)
    assert [e.id for e in again.datasets()] == [entry.id]


def test_three_files_are_stored_as_uploaded_and_read_back(url):
    docs = b"id\ttext\nd1\talpha beta\nd2\tgamma delta\n"
    queries = b"id\ttext\nq1\talpha\n"
    qrels = b"q1 0 d1 2\n"
    ds = datasets.from_files((docs, "docs.tsv"), (queries, "queries.tsv"), (qrels, "qrels.txt"), name="three")
    ws = open_workspace(url)
    files = [StoredFile("docs.tsv", docs), StoredFile("queries.tsv", queries), StoredFile("qrels.txt", qrels)]
    entry = ws.add_dataset(ds, FILES, files, "ben")
    assert ws.dataset_files(entry.id) == files
    back = ws.load_dataset(entry.id)
    assert back.fingerprint == ds.fingerprint and back.judgements() == [("q1", "d1", 2)]


def test_the_same_content_is_stored_once(url, invented):
    ws = open_workspace(url)
    first = ws.add_dataset(invented, ZIP, [_zip_file(invented)], "ana")
    size = ws.size()
    second = ws.add_dataset(invented.renamed("again"), ZIP, [_zip_file(invented)], "ben")
    assert second == first and ws.size() == size and len(ws.datasets()) == 1
    run = StoredFile("bm25.run", b"q01 Q0 d01 1 2.0 r\n")
    ws.add_run(first.id, "a", run, "ana")
    ws.add_run(first.id, "b", run, "ana")  # one file, two runs: stored once
    assert ws.size() == size + len(run.data)


def test_rename_and_delete_a_dataset_with_everything_it_holds(url, invented):
    ws = open_workspace(url)
    entry = ws.add_dataset(invented, ZIP, [_zip_file(invented)], "ana")
    ws.add_run(entry.id, "mine", StoredFile("mine.run", b"q01 Q0 d01 1 2.0 r\n"), "ana")
    ws.add_embeddings(entry.id, "vectors", [StoredFile("v.npz", b"x" * 10)], "ana")
    ws.grade(entry.id, "q01", "d01", 2, "ana")
    ws.rename_dataset(entry.id, "class of Monday", ANA)
    assert ws.dataset(entry.id).name == "class of Monday"
    assert ws.load_dataset(entry.id).name == "class of Monday"
    ws.delete_dataset(entry.id, ANA)  # to the trash
    ws.purge_dataset(entry.id, ANA)  # and for good
    assert ws.datasets() == [] and ws.size() == 0 and ws.grades(entry.id) == [] and ws.runs(entry.id) == []
    with pytest.raises(StoreError, match="no dataset"):
        ws.load_dataset(entry.id)
    with pytest.raises(StoreError, match="no dataset"):
        ws.rename_dataset(entry.id, "x", ANA)


def test_runs_are_stored_by_name_and_parsed_again(url, invented):
    ws = open_workspace(url)
    entry = ws.add_dataset(invented, ZIP, [_zip_file(invented)], "ana")
    data = b"q01 Q0 d01 1 2.5 sys\nq01 Q0 d02 2 1.5 sys\n"
    run = ws.add_run(entry.id, "my system", StoredFile("sys.run", data), "ana")
    assert (run.name, run.file_name, run.size, run.added_by) == ("my system", "sys.run", len(data), "ana")
    loaded = ws.load_run(entry.id, "my system")
    want = datasets.parse_run(data, "sys.run", "my system")
    assert loaded.name == "my system" and loaded.fingerprint == want.fingerprint
    with pytest.raises(StoreError, match="a run named 'my system' already"):
        ws.add_run(entry.id, "my system", StoredFile("other.run", b"q01 Q0 d03 1 1 x\n"), "ben")
    ws.rename_run(entry.id, "my system", "ours", ANA)
    assert [r.name for r in ws.runs(entry.id)] == ["ours"] and ws.load_run(entry.id, "ours").name == "ours"
    assert ws.runs(entry.id)[0].sha256 == hashlib.sha256(data).hexdigest()
    with pytest.raises(StoreError, match="no run 'my system' to rename"):
        ws.rename_run(entry.id, "my system", "x", ANA)
    ws.delete_run(entry.id, "ours", ANA)
    assert ws.runs(entry.id) == [] and ws.size() == ws.dataset(entry.id).size


def test_embeddings_are_stored_as_files_and_replaced_by_name(url, invented):
    ws = open_workspace(url)
    entry = ws.add_dataset(invented, ZIP, [_zip_file(invented)], "ana")
    two = [StoredFile("docs.npz", b"d" * 100), StoredFile("queries.npz", b"q" * 50)]
    e = ws.add_embeddings(entry.id, "e5", two, "ana")
    assert (e.file_names, e.size) == (("docs.npz", "queries.npz"), 150)
    assert ws.embeddings_files(entry.id, "e5") == two
    one = [StoredFile("all.npz", b"a" * 70)]
    ws.add_embeddings(entry.id, "e5", one, "ben")
    assert [(x.name, x.file_names, x.added_by) for x in ws.embeddings(entry.id)] == [("e5", ("all.npz",), "ben")]
    assert ws.size() == entry.size + 70  # the replaced files, referred to by nothing, are gone


# ------------------------------------------------------------------------------------------------- grades


def test_each_rater_s_latest_grade_is_in_force_and_every_grade_is_kept(url, invented):
    ws = open_workspace(url)
    entry = ws.add_dataset(invented, ZIP, [_zip_file(invented)], "ana")
    ws.grade(entry.id, "q01", "d05", 1, "ana")
    ws.grade(entry.id, "q01", "d05", 3, "ben")
    ws.grade(entry.id, "q01", "d05", 2, "ana")  # ana changes her mind
    latest = {(g.rater, g.grade) for g in ws.grades(entry.id)}
    assert latest == {("ana", 2), ("ben", 3)}
    assert [(g.rater, g.grade) for g in ws.grades(entry.id, latest=False)] == [("ana", 1), ("ben", 3), ("ana", 2)]
    assert all(g.graded_at.tzinfo is not None for g in ws.grades(entry.id))
    assert ws.take_back(entry.id, "q01", "d05", "ana", ANA) == 2  # her two grades of the pair; ben's stays
    assert [(g.rater, g.grade) for g in ws.grades(entry.id)] == [("ben", 3)]
    ws.grade(entry.id, "q02", "d01", 1, "ben")
    ws.grade(entry.id, "q02", "d01", 2, "ana")
    assert ws.take_back_all(entry.id, "ben", BEN) == 2 and [g.rater for g in ws.grades(entry.id)] == ["ana"]
    with pytest.raises(InputError, match="not an integer"):
        ws.grade(entry.id, "q01", "d05", 1.5, "ana")
    with pytest.raises(InputError, match="empty"):
        ws.grade(entry.id, "q01", "d05", 1, "  ")


@pytest.mark.slow
def test_two_raters_grading_one_pair_at_the_same_moment_both_keep_their_grade(url, invented):
    """Two servers (two processes, each its own connection), started together, each grading the same pair 20
    times: all 40 grades are stored, and each rater's last is in force."""
    ws = open_workspace(url)
    entry = ws.add_dataset(invented, ZIP, [_zip_file(invented)], "ana")
    code = (
        "import sys\nfrom retrieval.store.workspace import open_workspace\n"
        "ws = open_workspace(sys.argv[1]); sys.stdin.readline()\n"
        "for g in range(20): ws.grade(sys.argv[2], 'q01', 'd07', g % 4, sys.argv[3])\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, url, entry.id, rater],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for rater in ("ana", "ben")
    ]
    time.sleep(1.0)  # both have opened the store
    for p in procs:
        p.stdin.write("go\n")
        p.stdin.flush()
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    every = ws.grades(entry.id, latest=False)
    assert sorted((g.rater, g.grade) for g in every) == sorted((r, g % 4) for r in ("ana", "ben") for g in range(20))
    assert {(g.rater, g.grade) for g in ws.grades(entry.id)} == {("ana", 3), ("ben", 3)}


def test_threads_of_one_server_grading_at_once_lose_nothing(url, invented):
    ws = open_workspace(url)
    entry = ws.add_dataset(invented, ZIP, [_zip_file(invented)], "ana")
    errors = []

    def rate(rater):
        try:
            for g in range(15):
                ws.grade(entry.id, "q02", "d03", g % 3, rater)
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=rate, args=(f"rater {i}",)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(ws.grades(entry.id, latest=False)) == 60 and len(ws.grades(entry.id)) == 4


# ------------------------------------------------------------------------------------ all or nothing, killed


_SLOW_UPLOAD = """
import io, os, sys, time, zipfile
from pathlib import Path
import retrieval
from retrieval.corpus import dataset as datasets
from retrieval.store import workspace
from retrieval.store.workspace import ZIP, StoredFile, open_workspace

url, marker, pause = sys.argv[1], Path(sys.argv[2]), sys.argv[3] == "pause"
ds = retrieval.load("invented")
ws = open_workspace(url)
real = workspace.Workspace._put_blobs

def held(self, conn, files):
    shas = real(self, conn, files)  # the file's bytes are written, the transaction still open
    marker.write_text("written")
    if pause:
        time.sleep(600)
    return shas

workspace.Workspace._put_blobs = held
src, buf = zipfile.ZipFile(io.BytesIO(datasets.beir_zip(ds))), io.BytesIO()
with zipfile.ZipFile(buf, "w") as zf:  # 20 MB of blank lines the loader reads past, stored uncompressed: a long write
    for name in src.namelist():
        data = src.read(name) + (b"\\n" * 20_000_000 if name == "corpus.jsonl" else b"")
        zf.writestr(name, data, compress_type=zipfile.ZIP_STORED)
big = StoredFile("invented.zip", buf.getvalue())
ws.add_dataset(ds, ZIP, [big], "killed")
marker.write_text("committed")
time.sleep(600)
"""


def _upload_in_child(url: str, marker: Path, pause: bool) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", _SLOW_UPLOAD, url, str(marker), "pause" if pause else "go"],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )


def _wait_for(marker: Path, text: str, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 120
    while not (marker.exists() and marker.read_text() == text):
        assert proc.poll() is None, proc.stderr.read()
        assert time.monotonic() < deadline, f"the child never wrote {text!r}"
        time.sleep(0.05)


@pytest.mark.slow
def test_a_server_killed_mid_upload_leaves_none_of_it_and_one_killed_after_leaves_all(url, tmp_path):
    """A child process stores a dataset and is killed (SIGKILL) once its file's bytes are written but before the
    commit: the store holds nothing of it and takes writes again. A child killed right after its commit: the
    store holds the whole dataset, its file intact."""
    open_workspace(url).engine.dispose()  # the tables exist before the children race
    marker = tmp_path / "marker"
    child = _upload_in_child(url, marker, pause=True)
    _wait_for(marker, "written", child)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    ws = open_workspace(url)
    assert ws.datasets() == [] and ws.size() == 0
    marker.unlink()
    child = _upload_in_child(url, marker, pause=False)
    _wait_for(marker, "committed", child)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    (entry,) = ws.datasets()
    ds = ws.load_dataset(entry.id)
    assert entry.added_by == "killed" and ds.fingerprint == retrieval.load("invented").fingerprint
    assert ws.size() == entry.size > 20_000_000


# ------------------------------------------------------------------------------------- bounded, and refused


def test_the_size_limit_refuses_a_write_and_leaves_the_store_as_it_was(url, invented, monkeypatch):
    zipped = _zip_file(invented)
    ws = open_workspace(url, max_bytes=len(zipped.data) + 100)
    entry = ws.add_dataset(invented, ZIP, [zipped], "ana")
    before = (ws.datasets(), ws.size(), ws.runs(entry.id))
    with pytest.raises(StoreFull, match=f"would take it beyond.*{MAX_BYTES_ENV}.*nothing was stored"):
        ws.add_run(entry.id, "big", StoredFile("big.run", b"q01 Q0 d01 1 1 x\n" * 20), "ana")
    assert (ws.datasets(), ws.size(), ws.runs(entry.id)) == before
    monkeypatch.setenv(MAX_BYTES_ENV, "1k")
    assert open_workspace(url).max_bytes == 1024
    monkeypatch.setenv(MAX_BYTES_ENV, "lots")
    with pytest.raises(InputError, match=f"{MAX_BYTES_ENV}='lots'"):
        open_workspace(url)


def test_names_are_stored_as_given_never_run_as_sql(url, invented):
    ws = open_workspace(url)
    name = 'Robert\'); DROP TABLE datasets; -- "x" <b>'
    entry = ws.add_dataset(invented.renamed(name), ZIP, [_zip_file(invented)], name)
    ws.add_run(entry.id, name, StoredFile(name, b"q01 Q0 d01 1 1 x\n"), name)
    ws.grade(entry.id, name, name, 1, name)
    assert ws.dataset(entry.id).name == name and ws.runs(entry.id)[0].name == name
    assert ws.grades(entry.id)[0].rater == name and ws.grades(entry.id)[0].query_id == name
    for bad in ("", "a\x1b[2Jb", "x" * 201):
        with pytest.raises(InputError):
            ws.rename_dataset(entry.id, bad, ADMIN)


def test_a_newer_store_is_refused_with_one_message(url):
    open_workspace(url).engine.dispose()
    engine = sa.create_engine(url)
    with engine.begin() as c:
        c.execute(sa.text("UPDATE alembic_version SET version_num = :v"), {"v": "9999"})
    engine.dispose()
    with pytest.raises(
        StoreError,
        match=f"newer version of the lab \\(revision 9999; this version knows up to {known_revisions()[-1]}\\)",
    ):
        open_workspace(url)


def test_a_database_holding_other_tables_is_not_taken_over(url):
    if url.startswith("sqlite"):
        Path(sa.make_url(url).database).parent.mkdir(parents=True)
    engine = sa.create_engine(url)
    with engine.begin() as c:
        c.execute(sa.text("CREATE TABLE customers (id INTEGER)"))
    engine.dispose()
    with pytest.raises(StoreError, match="holds other tables \\(customers\\), not a workspace"):
        open_workspace(url)


def test_a_file_that_is_not_a_store_is_refused_and_left_alone(tmp_path):
    bad = tmp_path / "workspace.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="not a workspace this lab can open"):
        open_workspace(f"sqlite:///{bad}")
    assert bad.read_bytes() == b"this is not a database" * 100
    with pytest.raises(StoreError, match="not a database URL"):
        open_workspace("no such thing://")
    with pytest.raises(StoreError, match="cannot be used here"):
        open_workspace("oracle+nodriver://u@h/db")


def test_the_default_store_is_sqlite_under_the_home_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("RETRIEVAL_LAB_DATABASE_URL", raising=False)
    monkeypatch.setenv("RETRIEVAL_LAB_HOME", str(tmp_path / "lab"))
    assert default_url() == f"sqlite:///{tmp_path / 'lab' / 'workspace.sqlite'}"
    ws = open_workspace()
    assert (tmp_path / "lab" / "workspace.sqlite").is_file() and ws.datasets() == []
    monkeypatch.delenv("RETRIEVAL_LAB_HOME")
    assert default_url() == f"sqlite:///{Path('~/.local/share/retrieval-lab').expanduser() / 'workspace.sqlite'}"
    monkeypatch.setenv("RETRIEVAL_LAB_DATABASE_URL", "postgresql+psycopg://team@db.example/lab")
    assert default_url() == "postgresql+psycopg://team@db.example/lab"


# ---------------------------------------------------------------------------------------------- migrations


def test_the_migrations_build_the_tables_the_store_reads(url):
    """Alembic's comparison of the migrated database with schema.py finds no difference."""
    open_workspace(url).engine.dispose()
    engine = sa.create_engine(url)
    with engine.connect() as c:
        diff = compare_metadata(MigrationContext.configure(c), schema.metadata)
        assert MigrationContext.configure(c).get_current_revision() == known_revisions()[-1]
    engine.dispose()
    assert diff == []


# --------------------------------------------------------------------------------------------- experiments


def test_experiments_are_saved_listed_read_and_deleted(url, invented):
    ws = open_workspace(url)
    entry = ws.add_dataset(invented, ZIP, [_zip_file(invented)], "ana")
    body = {"params": {"k1": 1.2}, "per_query": {"BM25": {"q01": {"ndcg@5": 0.5}}}, "name": "é"}
    first = ws.save_experiment(entry.id, "monday", body, "ana")
    second = ws.save_experiment(entry.id, "monday", {**body, "params": {"k1": 0.9}}, "ben")  # a name again
    assert [(e.name, e.created_by) for e in ws.experiments(entry.id)] == [("monday", "ana"), ("monday", "ben")]
    assert ws.experiments("0000000000000000") == [] and len(ws.experiments()) == 2
    got, read = ws.experiment(second.id)
    assert got == second and read == {**body, "params": {"k1": 0.9}}
    with pytest.raises(InputError, match="not storable as JSON"):
        ws.save_experiment(entry.id, "bad", {"x": float("nan")}, "ana")
    ws.delete_experiment(first.id, ANA)
    assert [e.id for e in ws.experiments()] == [second.id]
    with pytest.raises(StoreError, match=f"no experiment {first.id}"):
        ws.experiment(first.id)
    ws.delete_dataset(entry.id, ANA)
    assert ws.experiments() == []


def test_a_store_made_by_the_first_version_opens_in_this_one_with_its_data(url, invented):
    """A store at the first revision, with a dataset and a grade written as that version wrote them, is upgraded
    when opened: the data stays and the newer tables are there."""
    from datetime import UTC, datetime

    from alembic import command

    if url.startswith("sqlite"):
        Path(sa.make_url(url).database).parent.mkdir(parents=True)
    engine = sa.create_engine(url)
    zipped = _zip_file(invented).data
    sha, now = hashlib.sha256(zipped).hexdigest(), datetime.now(UTC)
    with engine.begin() as conn:
        command.upgrade(migrations_config(conn), known_revisions()[0])
        conn.execute(sa.insert(schema.blobs).values(sha256=sha, size=len(zipped), data=zipped))
        conn.execute(
            sa.insert(schema.datasets).values(
                id=invented.fingerprint,
                name="invented",
                format=ZIP,
                n_docs=28,
                n_questions=14,
                n_judgements=len(invented.qrels),
                added_at=now,
                added_by="ana",
            )
        )
        conn.execute(
            sa.insert(schema.dataset_files).values(
                dataset_id=invented.fingerprint, role="zip", name="invented.zip", sha256=sha
            )
        )
        conn.execute(
            sa.insert(schema.grades).values(
                dataset_id=invented.fingerprint, query_id="q01", doc_id="d05", rater="ana", grade=2, graded_at=now
            )
        )
        assert "experiments" not in sa.inspect(conn).get_table_names()
    engine.dispose()
    ws = open_workspace(url)
    assert [e.id for e in ws.datasets()] == [invented.fingerprint] and [
        g.grade for g in ws.grades(invented.fingerprint)
    ] == [2]
    assert ws.load_dataset(invented.fingerprint).fingerprint == invented.fingerprint
    assert ws.save_experiment(invented.fingerprint, "after the upgrade", {"a": 1}, "ana").name == "after the upgrade"
