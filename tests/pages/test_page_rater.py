"""The rater in the browser, through app.py: the name typed once is written to a cookie of the app's own site and read
back by the next session of that browser (a reload asks nothing); a proxy's user header wins over it; blind grading
hides the other raters' grades of a document until the rater has graded it. The browser's side (the script run, the
cookie sent back) is tests/browser/test_browser.py's."""

from __future__ import annotations

import json
import re
import types

import pytest
import streamlit.runtime.context as st_context
from test_page_judge import as_rater, grade_widgets

from apptest import open_app, shown
from retrieval.corpus.dataset import load
from ui import rater, state

pytestmark = pytest.mark.app


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    """A store of each test's own."""
    monkeypatch.setenv("RETRIEVAL_LAB_HOME", str(tmp_path / "home"))


def browser(monkeypatch, cookies: dict[str, str], headers: dict[str, str] | None = None) -> None:
    """The request that opens each session from now on carries these cookies (and headers), as a browser's does."""
    client = types.SimpleNamespace(cookies=cookies, headers=list((headers or {}).items()))
    monkeypatch.setattr(st_context, "_get_client_context", lambda: client)


def written(at) -> dict[str, tuple[str, int]]:
    """The cookies the page's scripts set: name -> (value, max-age), read from the script as a browser runs it."""
    out = {}
    for h in at.get("html"):
        for name, literal, age in re.findall(
            r'document\.cookie = "(\w+)=" \+ encodeURIComponent\(("(?:[^"\\]|\\.)*")\) '
            r'\+ "; path=/; max-age=(\d+); SameSite=Strict";',
            h.proto.body,
        ):
            out[name] = (json.loads(literal), int(age))
    return out


def test_the_name_typed_is_kept_in_the_browser_and_a_new_session_grades_under_it(monkeypatch):
    at = as_rater(open_app("pages/judge.py"), "Ana Lima")
    assert written(at) == {rater.NAME_COOKIE: ("Ana Lima", rater.MAX_AGE)}
    at.run()
    assert written(at) == {}  # written once, not on every run
    browser(monkeypatch, {rater.NAME_COOKIE: "Ana%20Lima"})  # as encodeURIComponent wrote it
    again = open_app("pages/judge.py")
    assert again.text_input(key=state.RATER).value == "Ana Lima"
    assert not any("Type your name above to grade" in shown(i.value) for i in again.info)
    grade_widgets(again)[0].set_value(1).run()
    (grades,) = again.session_state[state.GRADES].values()
    assert {g.rater for g in grades} == {"Ana Lima"}
    again.text_input(key=state.RATER).set_value("").run()  # cleared: the browser forgets it
    assert written(again) == {rater.NAME_COOKIE: ("", 0)}


def test_a_name_with_markup_cannot_end_the_script():
    script = rater.cookie_script({rater.NAME_COOKIE: '</script><script>alert("x")</script> & \u2028'})
    assert script.count("<script>") == 1 and script.count("</script>") == 1 and script.endswith("</script>")
    assert (
        "<" not in script[len("<script>") : -len("</script>")]
        and "&" not in script[len("<script>") : -len("</script>")]
    )


def test_behind_a_proxy_its_header_wins_over_the_kept_name(monkeypatch):
    monkeypatch.setenv("RETRIEVAL_LAB_USER_HEADER", "X-Lab-User")
    browser(monkeypatch, {rater.NAME_COOKIE: "Ana"}, {"X-Lab-User": "carol"})
    at = open_app("pages/judge.py")
    assert "You grade as **carol** (from the proxy)." in [c.value for c in at.caption]
    assert not [t for t in at.text_input if t.key == state.RATER]
    grade_widgets(at)[0].set_value(2).run()
    (grades,) = at.session_state[state.GRADES].values()
    assert {g.rater for g in grades} == {"carol"} and state.RATER not in at.session_state
    assert rater.NAME_COOKIE not in written(at)


def test_blind_grading_hides_the_others_grades_until_the_rater_has_graded(monkeypatch):
    """Ana grades two documents; Ben, grading blind, sees nothing of hers on either until he grades one: then her
    grade of that one, the grade in force and their disagreement; the combined download waits for the other."""
    ana = as_rater(open_app("pages/judge.py"), "Ana")
    keys = [w.key for w in grade_widgets(ana)[:2]]
    for key, g in zip(keys, (2, 2)):
        next(w for w in grade_widgets(ana) if w.key == key).set_value(g).run()
    docs = [k.rsplit(":", 1)[1] for k in keys]
    ben = as_rater(open_app("pages/judge.py"), "Ben")
    assert any(shown(c.value).startswith("Graded by Ana 2") for c in ben.caption)  # not blind: shown
    ben.toggle(key=rater.BLIND).set_value(True).run()
    assert written(ben) == {rater.BLIND_COOKIE: ("1", rater.MAX_AGE)}
    captions = [shown(c.value) for c in ben.caption]
    assert not any("Ana" in c for c in captions)
    assert any(c.startswith("Blind grading: the other raters' grades of a document") for c in captions)
    next(w for w in grade_widgets(ben) if w.key.endswith(f":{docs[0]}")).set_value(0).run()
    captions = [shown(c.value) for c in ben.caption]
    assert (
        "Graded by you 0, Ana 2: 1 in force, by the mean, rounded half up. Click your grade again to take it back."
        in captions
    )
    assert not any(c.startswith("Graded by Ana") for c in captions)  # the other document: still hidden
    spread = next(d.value for d in ben.dataframe if "spread" in d.value.columns)
    assert list(spread["document"]) == [docs[0]]
    buttons = {d.proto.label: d.proto.disabled for d in ben.get("download_button")}
    every = f"All judgements in use ({len(load('invented').qrels) + 2})"
    assert buttons["The raters' combined (2)"] and buttons[every]
    assert ben.selectbox(key="judge_dl_rater").options == ["Ben"]
    next(w for w in grade_widgets(ben) if w.key.endswith(f":{docs[1]}")).set_value(1).run()
    buttons = {d.proto.label: d.proto.disabled for d in ben.get("download_button")}
    assert not buttons["The raters' combined (2)"] and not buttons[every]
    browser(monkeypatch, {rater.BLIND_COOKIE: "1"})  # his next session, in the same browser: blind again
    assert open_app("pages/judge.py").toggle(key=rater.BLIND).value is True
