"""The Data page's import of a workspace: a zip refused (here a grade beyond the scale in its last line) is one
message naming the member and line, the dataset in use stays in use, the store stays empty (so the import box is
still there) and the good zip is then imported whole."""

from __future__ import annotations

import json

import pytest
from test_page_data import beir_zip, upload
from test_page_workspace import FRUIT, data_page
from test_store_import import _index, _lines, rezip

from apptest import shown
from retrieval.store.transfer import export_workspace
from retrieval.store.workspace import open_workspace

pytestmark = pytest.mark.app


def test_a_refused_import_is_one_message_the_data_in_use_kept_and_the_store_empty(tmp_path, monkeypatch):
    monkeypatch.setenv("RETRIEVAL_LAB_HOME", str(tmp_path / "home"))
    at = data_page()
    upload(at, "data_zip", ("fruit.zip", beir_zip(), "application/zip"))
    ws = open_workspace(f"sqlite:///{tmp_path / 'home' / 'workspace.sqlite'}")
    q, d = FRUIT.query_ids[0], FRUIT.doc_ids[0]
    ws.grade(FRUIT.fingerprint, q, d, 2, "ana")
    ws.grade(FRUIT.fingerprint, q, d, 1, "ben")
    data = export_workspace(ws)
    grades = _index(data)["datasets"][0]["grades"]
    lines = _lines(data, grades)
    last = json.loads(lines[-1])
    last["grade"] = 10**30
    bad = rezip(data, {grades: ("\n".join([*lines[:-1], json.dumps(last)]) + "\n").encode()})

    monkeypatch.setenv("RETRIEVAL_LAB_HOME", str(tmp_path / "elsewhere"))  # another server, its store empty
    other = data_page()
    in_use = other.sidebar.markdown[0].value
    upload(other, "ws_import", ("workspace.zip", bad, "application/zip"))
    errors = [shown(e.value) for e in other.error]
    assert len(errors) == 1 and "\n" not in errors[0], errors
    assert errors[0].startswith("Not imported, the workspace left as it was: ")
    assert f"workspace.zip/{grades}:2: the grade 1000000000000000000000000000000 is not a whole number" in errors[0]
    assert not other.success and other.sidebar.markdown[0].value == in_use
    elsewhere = open_workspace(f"sqlite:///{tmp_path / 'elsewhere' / 'workspace.sqlite'}")
    assert elsewhere.is_empty() and elsewhere.size() == 0
    upload(other, "ws_import", ("workspace.zip", data, "application/zip"))  # the import box is still there
    assert any("Imported 1 dataset from workspace.zip" in shown(s.value) for s in other.success)
    assert [len(elsewhere.grades(FRUIT.fingerprint, latest=False))] == [2]
