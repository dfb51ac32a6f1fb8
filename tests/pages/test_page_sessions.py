"""Two sessions of one server: two AppTests in one process share the server-wide caches (the engine's, the
rankings'), as two browsers do. Each uploads a run of the same tag, questions and documents but other scores,
and each sees its own ranking (the workspace they share names the second one after its file, `mine`); a corrected
re-upload replaces the figures of its session only."""

from __future__ import annotations

import pytest
from test_page_data import open_data, upload
from test_page_per_question import side_by_side

pytestmark = pytest.mark.app


def run(scores: tuple[float, float, float, float]) -> bytes:
    """The same run file but for its scores: the same name (mysys), questions, documents and line count."""
    lines = [("q01", "pricing1"), ("q01", "refund1"), ("q02", "refund1"), ("q02", "refund2")]
    return "".join(f"{q} Q0 {d} {i + 1} {s:g} mysys\n" for i, ((q, d), s) in enumerate(zip(lines, scores))).encode()


# CORRECTED ranks every list in the order OTHER does, with other scores: only a key of the scores tells them apart
FIRST, OTHER, CORRECTED = (9.5, 3, 4, 2), (1, 7, 2, 4), (5, 6, 3, 5)


def mysys_q01(at, name: str = "mysys") -> list[tuple[str, float]]:
    """The run's top list for q01 on the Per question page: (document, score) in rank order."""
    at.switch_page("pages/per_question.py").run()
    at.selectbox(key="pq_question").set_value(0).run()  # q01, the invented corpus's first question
    assert not at.exception
    table = side_by_side(at)[name]
    return list(zip(table["document"], table["score"].astype(float)))


@pytest.mark.slow
def test_two_sessions_each_see_their_own_scores_and_a_corrected_upload_replaces_them():
    a, b = open_data(), open_data()
    upload(a, "data_runs", [("mine.run", run(FIRST), "text/plain")])
    upload(b, "data_runs", [("mine.run", run(OTHER), "text/plain")])
    assert list(b.session_state["runs"]) == ["mine"]  # the workspace holds a's file as mysys
    assert a.session_state["runs"]["mysys"].fingerprint != b.session_state["runs"]["mine"].fingerprint
    assert mysys_q01(a) == [("pricing1", 9.5), ("refund1", 3.0)]
    assert mysys_q01(b, "mine") == [("refund1", 7.0), ("pricing1", 1.0)]
    assert mysys_q01(a) == [("pricing1", 9.5), ("refund1", 3.0)]  # b's upload did not reach a

    a.switch_page("pages/data.py").run()
    a.button(key="data_run_remove:mysys").click().run()
    assert "mysys" not in a.session_state["runs"]
    upload(a, "data_runs", [("mine.run", run(CORRECTED), "text/plain")])  # corrected: same name, lines, ids
    assert mysys_q01(a) == [("refund1", 6.0), ("pricing1", 5.0)]
    assert mysys_q01(b, "mine") == [("refund1", 7.0), ("pricing1", 1.0)]  # the other session keeps its own
