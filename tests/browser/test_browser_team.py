"""A team's lab, checked as a team uses it (issue 44): two app servers on one PostgreSQL, behind a proxy that signs
people in with a header, driven by a real browser (Chromium through Playwright, each person a browser context with
the proxy's header).

Ana uploads a dataset on one server; Ben, on the other, cannot rename or delete it; a request without the header
may only look; the teacher (an admin) deletes it, the trash says who deleted it and when, and the teacher restores
it with Ben's grades and Ana's saved experiment.

It needs a PostgreSQL server ($RETRIEVAL_LAB_TEST_DATABASE_URL, as tests/store/test_store.py: `.ci/postgres` starts one);
it is skipped without one, except where $RETRIEVAL_LAB_REQUIRE_POSTGRES is set (CI), where it fails.
"""

from __future__ import annotations

import contextlib
import os

import pytest
from test_browser import (
    ARGS,
    CHROMIUM,
    IDLE,
    PROXY_HEADER,
    _idle,
    _serving,
    _upload_zip,
)
from test_page_data import beir_zip
from test_store import PG_ENV, REQUIRE_PG_ENV, _drop_test_databases, _postgres_database  # noqa: F401 - a fixture

import retrieval
from retrieval.analyses.experiments import record
from retrieval.store.workspace import open_workspace

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def database() -> str:
    if not os.environ.get(PG_ENV):
        if os.environ.get(REQUIRE_PG_ENV):
            pytest.fail(f"{REQUIRE_PG_ENV} is set but {PG_ENV} is not: the team's browser test cannot run")
        pytest.skip(f"no PostgreSQL server given ({PG_ENV})")
    return _postgres_database()


def _as(browser, name: str | None):
    """A browser context the proxy signed in as `name` (None: a request without the header)."""
    headers = {PROXY_HEADER: name} if name else {}
    return browser.new_context(viewport={"width": 1024, "height": 768}, extra_http_headers=headers).new_page()


def _data_page(page, url: str) -> str:
    page.goto(f"{url}/data")
    page.wait_for_selector(IDLE, timeout=240_000)  # a server's first page waits for its start on a busy machine
    _idle(page)
    return page.locator("[data-testid=stMain]").inner_text()


def _control(page, key: str, role: str = "button"):
    """The widget of this key (Streamlit marks its container with the class st-key-<key>)."""
    return page.locator(f"[class*='st-key-{key}'] {'input' if role == 'checkbox' else 'button'}").first


def test_two_servers_one_store_only_the_owner_or_an_admin_deletes_and_the_trash_gives_everything_back(
    database, tmp_path
):
    from playwright.sync_api import sync_playwright

    zipped = tmp_path / "fruit.zip"
    zipped.write_bytes(beir_zip())
    env = {
        "RETRIEVAL_LAB_DATABASE_URL": database,
        "RETRIEVAL_LAB_USER_HEADER": PROXY_HEADER,
        "RETRIEVAL_LAB_ADMINS": "teacher",
    }
    ws = open_workspace(database)
    with contextlib.ExitStack() as servers, sync_playwright() as p:
        one = servers.enter_context(_serving(tmp_path / "one", env))
        two = servers.enter_context(_serving(tmp_path / "two", env))
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)

        ana = _as(browser, "ana")
        _data_page(_as(browser, None), two)  # both servers up and past their first run
        _data_page(ana, one)
        _upload_zip(ana, one, zipped)
        (entry,) = ws.datasets()
        assert (entry.name, entry.owner, entry.added_by) == ("fruit", "ana", "ana")
        ds = ws.load_dataset(entry.id)
        ws.grade(entry.id, ds.query_ids[0], ds.doc_ids[0], 2, "ben")  # ben's grade and ana's experiment, as saved
        params = retrieval.Params()  # by the other server's pages
        ws.save_experiment(entry.id, "ana's view", record(retrieval.evaluate(ds, params), params), "ana")
        held = (ws.grades(entry.id, latest=False), ws.experiments(entry.id))

        ben = _as(browser, "ben")
        text = _data_page(ben, two)
        workspace_part = text[text.find("Workspace") :][:1500]
        assert "Signed in as ben (from the proxy)" in text and ": 1 dataset," in workspace_part, workspace_part
        assert _control(ben, "ws_delete").is_disabled() and _control(ben, "ws_rename_button").is_disabled()
        assert _control(ben, "ws_sure", "checkbox").is_disabled()
        stranger = _as(browser, None)
        text = _data_page(stranger, two)
        assert f"You are not signed in (the proxy sent no {PROXY_HEADER} header)" in text
        assert stranger.get_by_role("textbox", name="Your name").count() == 0  # never a typed name
        assert _control(stranger, "ws_sure", "checkbox").is_disabled()
        assert [e.id for e in ws.datasets()] == [entry.id]

        teacher = _as(browser, "teacher")
        text = _data_page(teacher, two)
        assert "Signed in as teacher (from the proxy), an admin" in text
        teacher.locator("[class*='st-key-ws_sure'] label").first.click()  # as a person ticks it
        _idle(teacher)
        _control(teacher, "ws_delete").click()
        _idle(teacher)
        text = teacher.locator("[data-testid=stMain]").inner_text()
        assert (
            "Deleted fruit from the workspace. It is in the trash with its runs, grades and experiments: "
            "teacher deleted it" in text
        )
        assert ws.datasets() == [] and [e.deleted_by for e in ws.trash()] == ["teacher"]

        text = _data_page(ana, one)  # the other server, the same store: the trash says who deleted what, when
        (gone,) = ws.trash()
        assert "Trash (1 dataset)" in text
        assert (
            f"fruit, owned by ana: deleted by teacher on {gone.deleted_at:%Y-%m-%d %H:%M} UTC; restorable until "
            f"{gone.purged_at(30):%Y-%m-%d %H:%M} UTC."
        ) in text
        ana.screenshot(path=str(tmp_path / "trash.png"), full_page=True)

        text = _data_page(ben, one)
        assert _control(ben, "ws_restore").is_disabled()  # not his
        text = _data_page(teacher, one)
        _control(teacher, "ws_restore").click()
        _idle(teacher)
        assert (
            "Restored fruit with its runs, grades and experiments"
            in teacher.locator("[data-testid=stMain]").inner_text()
        )
        assert teacher.locator("[data-testid=stException]").count() == 0
        browser.close()
    assert [e.id for e in ws.datasets()] == [entry.id] and ws.trash() == []
    assert (ws.grades(entry.id, latest=False), ws.experiments(entry.id)) == held
    assert ws.load_dataset(entry.id).fingerprint == entry.id
    ws.engine.dispose()
