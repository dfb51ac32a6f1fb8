"""`python -m retrieval workspace delete|restore|trash`: the store's owners and admins hold on the command line too
(the store checks them, whoever calls it)."""

from __future__ import annotations

import json

import retrieval
from retrieval import cli
from retrieval.corpus import dataset as datasets
from retrieval.store.access import ADMINS_ENV, USER_HEADER_ENV
from retrieval.store.workspace import ZIP, StoredFile, open_workspace


def run(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_only_the_owner_or_an_admin_deletes_and_restores_from_the_command_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(USER_HEADER_ENV, "X-Forwarded-User")  # a team's server: people are told apart
    monkeypatch.setenv(ADMINS_ENV, "teacher")
    url = f"sqlite:///{tmp_path / 'ws.sqlite'}"
    ws = open_workspace(url)
    ds = retrieval.load("invented")
    entry = ws.add_dataset(ds, ZIP, [StoredFile("invented.zip", datasets.beir_zip(ds))], "ana")
    ws.grade(entry.id, "q01", "d05", 2, "ben")
    code, out, err = run(capsys, "workspace", "delete", entry.id, "--as", "ben", "--store", url)
    assert code == 2 and out == ""
    assert err == "retrieval: error: invented: ben may not delete it: only its owner (ana) or an admin\n"
    assert [e.id for e in ws.datasets()] == [entry.id]
    code, out, _ = run(capsys, "workspace", "delete", entry.id, "--as", "ana", "--store", url)
    assert code == 0 and out.startswith(f"moved invented ({entry.id}) to the trash: restorable until ")
    code, out, _ = run(capsys, "workspace", "trash", "--json", "--store", url)
    (gone,) = json.loads(out)
    assert (gone["id"], gone["owner"], gone["deleted_by"]) == (entry.id, "ana", "ana")
    code, out, err = run(capsys, "workspace", "restore", entry.id, "--as", "ben", "--store", url)
    assert code == 2 and "ben may not restore it" in err
    code, out, _ = run(capsys, "workspace", "restore", entry.id, "--as", "teacher", "--store", url)
    assert code == 0 and out == f"restored invented ({entry.id}) with its runs, grades and experiments\n"
    assert [g.rater for g in ws.grades(entry.id)] == ["ben"]
    code, out, _ = run(capsys, "workspace", "trash", "--store", url)
    assert out == "the trash is empty\n"
