"""Owners, admins and the trash in the workspace store, and its hygiene (issue 44), on SQLite and on PostgreSQL
where a server is given: what a team running the lab for a semester relies on.

* a dataset belongs to whoever added it: renaming, deleting or restoring it needs its owner or an admin; a rater
  takes back only their own grades; the store refuses the rest itself, whoever calls it;
* a deletion goes to the trash with the dataset's runs, grades and experiments, restorable until it is purged;
* space freed goes back to the disk; a BEIR zip's member no loader reads is not kept; grades count against the
  size limit and are bounded per rater in the store (a reload or another server does not reset it).
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from datetime import UTC, datetime, timedelta
from hashlib import sha256
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from test_store import _drop_test_databases, _zip_file, invented, url  # noqa: F401 - the fixtures

import retrieval
from retrieval.corpus import dataset as datasets
from retrieval.store import access
from retrieval.store.access import Actor
from retrieval.store.transfer import INDEX, export_workspace
from retrieval.store.workspace import (
    MAX_GRADES_ENV,
    TRASH_DAYS_ENV,
    ZIP,
    Forbidden,
    StoredFile,
    StoreError,
    StoreFull,
    known_revisions,
    migrations_config,
    open_workspace,
)

ANA, BEN, ADMIN = Actor("ana"), Actor("ben"), Actor("root", admin=True)
RUN = StoredFile("mine.run", b"q01 Q0 d01 1 2.0 r\n")


@pytest.fixture
def team(url, invented):  # noqa: F811 - test_store's fixtures
    """A store holding ana's dataset with a run, two raters' grades and an experiment."""
    ws = open_workspace(url)
    entry = ws.add_dataset(invented, ZIP, [_zip_file(invented)], "ana")
    ws.add_run(entry.id, "mine", RUN, "ana")
    ws.grade(entry.id, "q01", "d05", 2, "ana")
    ws.grade(entry.id, "q01", "d05", 1, "ben")
    ws.save_experiment(entry.id, "monday", {"a": 1}, "ben")
    return ws, entry


def _held(ws, did: str) -> tuple:
    """What a dataset holds, as a team would check it after a restore."""
    return (
        [(g.rater, g.grade) for g in ws.grades(did, latest=False)],
        [r.name for r in ws.runs(did)],
        [e.name for e in ws.experiments(did)],
    )


# ------------------------------------------------------------------------------------------- who may change what


def test_the_person_who_adds_a_dataset_owns_it_and_only_they_or_an_admin_rename_or_delete_it(team):
    ws, entry = team
    assert entry.owner == "ana" and entry.added_by == "ana"
    before = (ws.datasets(), _held(ws, entry.id), ws.size())
    for doing in (lambda: ws.rename_dataset(entry.id, "mine now", BEN), lambda: ws.delete_dataset(entry.id, BEN)):
        with pytest.raises(
            Forbidden, match=r"invented: ben may not (rename|delete) it: only its owner \(ana\) or an admin"
        ):
            doing()
    assert (ws.datasets(), _held(ws, entry.id), ws.size()) == before  # refused: the store as it was
    ws.rename_dataset(entry.id, "class of Monday", ANA)
    ws.rename_dataset(entry.id, "class of Tuesday", ADMIN)
    assert ws.dataset(entry.id).name == "class of Tuesday"


def test_a_rater_takes_back_only_their_own_grades_and_the_owner_or_an_admin_anyone_s(team):
    ws, entry = team
    with pytest.raises(Forbidden, match="ben may not change what ana added"):
        ws.take_back(entry.id, "q01", "d05", "ana", BEN)
    with pytest.raises(Forbidden, match="ben may not change what ana added"):
        ws.take_back_all(entry.id, "ana", BEN)
    assert sorted(g.rater for g in ws.grades(entry.id)) == ["ana", "ben"]
    assert ws.take_back(entry.id, "q01", "d05", "ben", BEN) == 1  # his own
    ws.grade(entry.id, "q02", "d01", 1, "cy")
    assert ws.take_back_all(entry.id, "cy", ANA) == 1  # the dataset's owner
    assert ws.take_back_all(entry.id, "ana", ADMIN) == 1  # an admin
    assert ws.grades(entry.id) == []


def test_runs_and_experiments_are_changed_by_whoever_added_them_the_owner_or_an_admin(team):
    ws, entry = team
    (experiment,) = ws.experiments(entry.id)
    with pytest.raises(Forbidden, match="run mine: ben may not change what ana added"):
        ws.delete_run(entry.id, "mine", BEN)
    with pytest.raises(Forbidden, match="run mine: ben may not"):
        ws.rename_run(entry.id, "mine", "his", BEN)
    with pytest.raises(Forbidden, match=f"experiment {experiment.id}: cy may not change what ben added"):
        ws.delete_experiment(experiment.id, Actor("cy"))
    assert [r.name for r in ws.runs(entry.id)] == ["mine"] and len(ws.experiments(entry.id)) == 1
    ws.delete_experiment(experiment.id, ANA)  # ben's experiment, ana's dataset
    ws.delete_run(entry.id, "mine", ANA)
    assert ws.runs(entry.id) == [] and ws.experiments(entry.id) == []


def test_admins_are_named_in_the_environment_and_everyone_is_one_without_sign_in(monkeypatch):
    monkeypatch.delenv(access.USER_HEADER_ENV, raising=False)
    monkeypatch.delenv(access.ADMINS_ENV, raising=False)
    assert access.actor("anyone") == Actor("anyone", admin=True)  # one person on a laptop: manages everything
    monkeypatch.setenv(access.USER_HEADER_ENV, "X-Forwarded-User")
    monkeypatch.setenv(access.ADMINS_ENV, " teacher , root,,")
    assert access.admins() == {"teacher", "root"}
    assert access.actor("teacher").admin and access.actor("root").admin and not access.actor("ana").admin
    assert not Actor("ana").may_manage(None) and Actor("ana").may_manage("ana") and ADMIN.may_manage(None)


# ------------------------------------------------------------------------------------------------------ the trash


def test_a_deleted_dataset_goes_to_the_trash_and_comes_back_whole(team):
    ws, entry = team
    held = _held(ws, entry.id)
    gone = ws.delete_dataset(entry.id, ANA)
    assert (gone.deleted_by, gone.owner) == ("ana", "ana") and gone.deleted_at is not None
    assert ws.datasets() == [] and ws.dataset(entry.id) is None and ws.experiments() == []
    assert [(e.id, e.name, e.deleted_by) for e in ws.trash()] == [(entry.id, "invented", "ana")]
    with pytest.raises(StoreError, match="no dataset"):
        ws.load_dataset(entry.id)  # a link to it says it is gone
    with pytest.raises(StoreError, match="invented is in the trash \\(deleted by ana\\): restore it"):
        ws.grade(entry.id, "q01", "d01", 1, "ben")
    with pytest.raises(StoreError, match="in the trash as invented"):
        ws.add_dataset(retrieval.load("invented"), ZIP, [_zip_file(retrieval.load("invented"))], "ben")
    with pytest.raises(Forbidden, match="ben may not restore it"):
        ws.restore_dataset(entry.id, BEN)
    with pytest.raises(Forbidden, match="ben may not delete for good it"):
        ws.purge_dataset(entry.id, BEN)
    back = ws.restore_dataset(entry.id, ADMIN)
    assert back.deleted_at is None and ws.trash() == [] and _held(ws, entry.id) == held
    assert ws.load_dataset(entry.id).fingerprint == entry.id


def test_the_trash_is_purged_after_its_days_and_at_once_with_none(team, monkeypatch):
    ws, entry = team
    monkeypatch.setenv(TRASH_DAYS_ENV, "7")
    ws.delete_dataset(entry.id, ANA)
    assert ws.purge_expired(datetime.now(UTC) + timedelta(days=6)) == [] and len(ws.trash()) == 1
    assert ws.purge_expired(datetime.now(UTC) + timedelta(days=7, seconds=1)) == ["invented"]
    assert ws.trash() == [] and ws.size() == 0 and ws.grades(entry.id) == [] and ws.runs(entry.id) == []
    with pytest.raises(StoreError, match="no dataset .* in the trash to restore"):
        ws.restore_dataset(entry.id, ADMIN)
    monkeypatch.setenv(TRASH_DAYS_ENV, "0")
    again = ws.add_dataset(retrieval.load("invented"), ZIP, [_zip_file(retrieval.load("invented"))], "ana")
    ws.delete_dataset(again.id, ANA)
    assert ws.trash() == [] and ws.size() == 0
    monkeypatch.setenv(TRASH_DAYS_ENV, "a month")
    with pytest.raises(StoreError, match=f"{TRASH_DAYS_ENV}: 'a month' is not a number"):
        ws.delete_dataset(again.id, ANA)


def test_a_store_made_before_owners_upgrades_with_its_datasets_owned_by_nobody(url, invented):  # noqa: F811 - test_store's fixtures
    """A store at revision 0002 (no owners) opens in this version: its dataset is kept, owned by nobody, so only an
    admin renames or deletes it; a dataset added since has its adder as owner."""
    if url.startswith("sqlite"):
        Path(sa.make_url(url).database).parent.mkdir(parents=True)
    engine = sa.create_engine(url)
    zipped = _zip_file(invented).data
    with engine.begin() as conn:
        command.upgrade(migrations_config(conn), "0002")
        conn.execute(
            sa.text("INSERT INTO blobs (sha256, size, data) VALUES (:s, :n, :d)"),
            {"s": sha256(zipped).hexdigest(), "n": len(zipped), "d": zipped},
        )
        conn.execute(
            sa.text(
                "INSERT INTO datasets (id, name, format, n_docs, n_questions, n_judgements, added_at, "
                "added_by) VALUES (:id, 'invented', 'beir-zip', 28, 14, 27, :t, 'ana')"
            ),
            {"id": invented.fingerprint, "t": datetime.now(UTC)},
        )
        conn.execute(
            sa.text(
                "INSERT INTO dataset_files (dataset_id, role, name, sha256) VALUES (:id, 'zip', 'invented.zip', :s)"
            ),
            {"id": invented.fingerprint, "s": sha256(zipped).hexdigest()},
        )
    engine.dispose()
    ws = open_workspace(url)
    (entry,) = ws.datasets()
    assert entry.owner is None and entry.added_by == "ana" and "0003" in known_revisions()
    with pytest.raises(Forbidden, match="only an admin \\(it has no owner: it was stored before owners were kept\\)"):
        ws.delete_dataset(entry.id, ANA)
    ws.delete_dataset(entry.id, ADMIN)
    ws.restore_dataset(entry.id, ADMIN)
    assert ws.load_dataset(entry.id).fingerprint == invented.fingerprint


def test_the_export_names_each_dataset_s_owner_and_leaves_the_trash_out(team, invented):  # noqa: F811 - test_store's fixtures
    ws, entry = team
    with zipfile.ZipFile(io.BytesIO(export_workspace(ws))) as zf:
        (exported,) = json.loads(zf.read(INDEX))["datasets"]
    assert exported["owner"] == "ana"
    ws.delete_dataset(entry.id, ANA)
    with zipfile.ZipFile(io.BytesIO(export_workspace(ws))) as zf:
        index = json.loads(zf.read(INDEX))
    assert index["datasets"] == [] and index["experiments"] == []


# ------------------------------------------------------------------------------------------------------- hygiene


def _on_disk(store: str) -> int:
    path = Path(sa.make_url(store).database)
    return sum(p.stat().st_size for p in (path, path.with_name(path.name + "-wal")) if p.exists())


def test_sqlite_gives_the_space_of_a_purged_dataset_back_to_the_disk(tmp_path):
    store = f"sqlite:///{tmp_path / 'lab.sqlite'}"
    ws = open_workspace(store)
    docs = b"id\ttext\n" + b"".join(b"d%d\t%s\n" % (i, os.urandom(3000).hex().encode()) for i in range(800))  # 4.8 MB
    ds = datasets.from_files(
        (docs, "docs.tsv"), (b"id\ttext\nq1\tanything\n", "q.tsv"), (b"q1 0 d1 1\n", "qrels.txt"), name="big"
    )
    files = [
        StoredFile("docs.tsv", docs),
        StoredFile("q.tsv", b"id\ttext\nq1\tanything\n"),
        StoredFile("qrels.txt", b"q1 0 d1 1\n"),
    ]
    entry = ws.add_dataset(ds, "files", files, "ana")
    full = _on_disk(store)
    assert full > 4_800_000
    ws.delete_dataset(entry.id, ANA)
    assert _on_disk(store) > 4_800_000  # in the trash: still held
    ws.purge_dataset(entry.id, ANA)
    assert _on_disk(store) < 1_000_000, (full, _on_disk(store))


def test_a_store_made_without_auto_vacuum_is_switched_to_it_when_opened(tmp_path):
    path = tmp_path / "old.sqlite"
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        command.upgrade(migrations_config(conn), "0002")
        assert conn.exec_driver_sql("PRAGMA auto_vacuum").scalar() == 0
    engine.dispose()
    ws = open_workspace(f"sqlite:///{path}")
    with ws.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA auto_vacuum").scalar() == 2  # incremental


def test_a_beir_zip_member_no_loader_reads_is_neither_stored_nor_counted(url, invented):  # noqa: F811 - test_store's fixtures
    buf = io.BytesIO(datasets.beir_zip(invented))
    with zipfile.ZipFile(buf, "a") as zf:
        zf.writestr("junk/padding.bin", os.urandom(3_000_000), compress_type=zipfile.ZIP_STORED)
        zf.writestr("README.md", "not read")
    padded = buf.getvalue()
    ws = open_workspace(url, max_bytes=1_000_000)  # the junk alone is three times the limit
    entry = ws.add_dataset(
        datasets.load_beir_zip(padded, "invented.zip"), ZIP, [StoredFile("invented.zip", padded)], "ana"
    )
    (kept,) = ws.dataset_files(entry.id)
    with zipfile.ZipFile(io.BytesIO(kept.data)) as zf:
        assert sorted(zf.namelist()) == ["corpus.jsonl", "qrels/test.tsv", "queries.jsonl"]
    assert entry.size == len(kept.data) < 10_000 and ws.size() == entry.size
    assert ws.load_dataset(entry.id).fingerprint == invented.fingerprint


def test_grades_count_against_the_size_limit(url, invented):  # noqa: F811 - test_store's fixtures
    ws = open_workspace(url)
    entry = ws.add_dataset(invented, ZIP, [_zip_file(invented)], "ana")
    files = ws.size()
    ws.grade(entry.id, "q01", "d05", 2, "ana")
    assert ws.size() == files + len("q01d05ana") + 64
    tight = open_workspace(url, max_bytes=ws.size() + 100)
    tight.grade(entry.id, "q01", "d06", 1, "ana")
    with pytest.raises(StoreFull, match="these grades would take it beyond"):
        tight.grade(entry.id, "q01", "d07", 1, "ana")
    assert len(ws.grades(entry.id, latest=False)) == 2


def test_a_rater_s_grades_are_bounded_in_the_store_whatever_the_session(url, invented, monkeypatch):  # noqa: F811 - test_store's fixtures
    monkeypatch.setenv(MAX_GRADES_ENV, "3")
    ws = open_workspace(url)
    entry = ws.add_dataset(invented, ZIP, [_zip_file(invented)], "ana")
    for g in range(3):
        ws.grade(entry.id, "q01", "d05", g, "ana")  # a changed grade counts again
    again = open_workspace(url)  # a reload, another server: the count is the store's
    with pytest.raises(StoreFull, match="ana has given 3 grades of this dataset.*the 3 a rater may give"):
        again.grade(entry.id, "q01", "d06", 1, "ana")
    again.grade(entry.id, "q01", "d06", 1, "ben")  # another rater has their own bound
    assert [g.rater for g in again.grades(entry.id, latest=False)] == ["ana"] * 3 + ["ben"]
    assert again.take_back(entry.id, "q01", "d05", "ana", ANA) == 3
    again.grade(entry.id, "q01", "d06", 1, "ana")  # taken back: room again
