"""The Data page's trash and sign-in, as one person on a laptop and as a request without the proxy's header
(issue 44): a deletion goes to the trash, which says who deleted what and when, and gives it back with its grades;
where sign-in is configured, a request without the header keeps nothing and is never asked for a name."""

from __future__ import annotations

import pytest
from test_page_data import beir_zip, upload
from test_page_workspace import FRUIT

from apptest import open_app, shown
from retrieval.store.access import USER_HEADER_ENV
from retrieval.store.workspace import open_workspace

pytestmark = pytest.mark.app


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("RETRIEVAL_LAB_HOME", str(tmp_path / "home"))
    monkeypatch.delenv(USER_HEADER_ENV, raising=False)
    return tmp_path / "home"


def test_on_a_laptop_a_deleted_dataset_goes_to_the_trash_and_comes_back_with_its_grades(home):
    at = open_app("pages/data.py")
    at.text_input(key="rater").set_value("Ana").run()
    upload(at, "data_zip", ("fruit.zip", beir_zip(), "application/zip"))
    ws = open_workspace(f"sqlite:///{home / 'workspace.sqlite'}")
    ws.grade(FRUIT.fingerprint, "q1", "d1", 2, "Ben")
    at.checkbox(key=f"ws_sure:{FRUIT.fingerprint}").check().run()
    at.button(key="ws_delete").click().run()
    assert any(
        "Deleted fruit from the workspace: it stays in use in this session until you leave it. It is in the "
        "trash with its runs, grades and experiments: Ana deleted it" in shown(i.value)
        for i in at.info
    )
    (gone,) = ws.trash()
    said = f"fruit, owned by Ana: deleted by Ana on {gone.deleted_at:%Y-%m-%d %H:%M} UTC; restorable until"
    assert any(said in shown(c.value).replace("**", "") for c in at.caption)
    at.button(key="ws_restore").click().run()
    assert any("Restored fruit with its runs, grades and experiments" in shown(s.value) for s in at.success)
    assert [e.id for e in ws.datasets()] == [FRUIT.fingerprint] and [g.rater for g in ws.grades(FRUIT.fingerprint)] == [
        "Ben"
    ]
    assert not at.exception


def test_where_sign_in_is_configured_a_request_without_the_header_changes_nothing(home, monkeypatch):
    monkeypatch.setenv(USER_HEADER_ENV, "X-Forwarded-User")
    at = open_app("pages/data.py")
    assert any(
        "You are not signed in (the proxy sent no X-Forwarded-User header)" in shown(w.value) for w in at.warning
    )
    assert not [t for t in at.text_input if t.key == "rater"]  # never a typed name
    upload(at, "data_zip", ("fruit.zip", beir_zip(), "application/zip"))
    assert at.sidebar.markdown[0].value == "**Dataset:** fruit — 6 documents, 3 questions"  # in use, not kept
    assert any("Not kept in the workspace: You are not signed in" in shown(w.value) for w in at.warning)
    assert open_workspace(f"sqlite:///{home / 'workspace.sqlite'}").datasets() == []
    judge = open_app("pages/judge.py")
    assert any("You are not signed in" in shown(w.value) for w in judge.warning)
    assert not [t for t in judge.text_input if t.key == "rater"]
