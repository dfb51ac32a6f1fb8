"""The Data page's dense section, used as a person would: encode an uploaded corpus with the bundled model (in
the background, with progress, asked first when long), or bring embeddings; bad files get one message and
what was loaded stays."""

from __future__ import annotations

import io
import time

import numpy as np
import pytest
from test_page_data import beir_zip, open_data, to_overview, upload

from apptest import shown
from ui import dense as ui_dense

pytestmark = pytest.mark.app


@pytest.fixture(autouse=True)
def fresh(tmp_path, monkeypatch):
    """Each test starts with no vectors anywhere: an empty disk cache, no encoding job, no engine kept; the model's
    rate on this machine is timed (as the app's warm-up thread times it at start)."""
    from retrieval.engine import registry
    from retrieval.retrievers import dense

    dense.seconds_per_token()
    monkeypatch.setenv("RETRIEVAL_LAB_CACHE", str(tmp_path))
    ui_dense.JOBS.clear()
    registry._ENGINES.clear()
    yield
    ui_dense.JOBS.clear()
    registry._ENGINES.clear()


def fruit():
    at = open_data()
    upload(at, "data_zip", ("fruit.zip", beir_zip(), "application/zip"))
    return at


def npz(**arrays) -> bytes:
    b = io.BytesIO()
    np.savez(b, **{k: np.asarray(v) for k, v in arrays.items()})
    return b.getvalue()


FRUIT_DOCS = ["d1", "d2", "d3", "d4", "d5", "d6"]
FRUIT_QUESTIONS = ["q1", "q2", "q3"]


def good_npz() -> bytes:
    docs = np.eye(6, 4, dtype=np.float32) + 0.01  # d1..d4 along one axis each; d5, d6 near zero on every axis
    docs[4, 0] = docs[5, 1] = 1.0
    queries = np.zeros((3, 4), dtype=np.float32)
    queries[0, 1] = queries[1, 3] = queries[2, 2] = 1.0  # q1 -> d2, q2 -> d4, q3 -> d3
    return npz(doc_ids=FRUIT_DOCS, doc_vectors=docs, query_ids=FRUIT_QUESTIONS, query_vectors=queries)


def test_an_upload_without_vectors_offers_the_bundled_model_and_encodes_in_the_background():
    at = fruit()
    assert "dense" not in [b.label for b in at.get("download_button")]
    words = " ".join(m.value for m in at.markdown)
    assert "would encode the 6 documents in about" in words and "times the tokens counted on a sample" in words
    assert ui_dense.KEY_CONFIRM not in [c.key for c in at.checkbox]  # a short wait: no question asked
    button = next(b for b in at.button if b.label == "Encode with the bundled model")
    button.click().run()
    assert not at.exception
    from retrieval.corpus import dataset

    job = ui_dense.job_of(dataset.load_beir_zip(beir_zip(), "fruit.zip"))
    assert job is not None
    deadline = time.monotonic() + 120
    while job.running and time.monotonic() < deadline:
        time.sleep(0.2)
    assert job.result is not None, job.error
    at.run()
    assert not at.exception
    assert any("The system **dense** ranks by cosine" in i.value for i in at.info)
    assert "dense" in to_overview(at).dataframe[0].value.index


def test_before_the_model_is_timed_the_page_is_drawn_and_the_offer_follows_once_timed_in_the_background(monkeypatch):
    """No rate timed yet in this process: the page does not time the encoder on its own thread (beside an upload's
    SVD that held it 2.5 s); it says the timing is under way, draws the rest, and a background thread times it; the
    next run shows the offer at that rate (the fake timing: 0.5 s a token)."""
    import threading

    from retrieval.retrievers import dense

    release, on_page = threading.Event(), []
    monkeypatch.setattr(dense, "_RATE", [])
    monkeypatch.setattr(dense, "_CALIBRATING", [])

    def calibrate(wait):
        release.wait(30)
        dense._RATE.append(0.5)

    monkeypatch.setattr(dense, "calibrate_when_idle", calibrate)
    monkeypatch.setattr(dense, "_timed_rate", lambda: on_page.append(threading.current_thread().name) or 0.5)
    at = fruit()
    assert not at.exception
    assert any("Timing the bundled model" in c.value for c in at.caption)
    assert "Encode with the bundled model" not in [b.label for b in at.button]
    assert "Relevant documents per question" in " ".join(m.value for m in at.markdown)  # the rest of the page is there
    (thread,) = dense._CALIBRATING
    assert thread.is_alive() and dense.rate_in_force() is None
    release.set()
    thread.join(10)
    at.run()
    words = " ".join(m.value for m in at.markdown)
    tokens = dense.corpus_tokens(at.session_state["dataset"])
    assert f"would encode the 6 documents in about **{ui_dense.duration(0.5 * tokens)}**" in words
    assert "Encode with the bundled model" in [b.label for b in at.button] and on_page == []


def test_a_long_encoding_is_started_only_once_the_person_confirms(monkeypatch):
    monkeypatch.setattr(ui_dense, "ASK_ABOVE_S", 0.0)
    at = fruit()
    assert any("That is a long wait" in i.value for i in at.info)
    button = next(b for b in at.button if b.label == "Encode with the bundled model")
    assert button.disabled
    at.checkbox(key=ui_dense.KEY_CONFIRM).check().run()
    assert not next(b for b in at.button if b.label == "Encode with the bundled model").disabled


def test_uploaded_embeddings_become_the_dense_system():
    at = fruit()
    upload(at, ui_dense.KEY_UPLOAD, [("fruit.npz", good_npz(), "application/octet-stream")])
    next(b for b in at.button if b.label == "Use these embeddings").click().run()
    assert not at.exception
    assert any("The system **dense** ranks by cosine" in i.value for i in at.info)
    at = to_overview(at)
    assert "dense" in at.dataframe[0].value.index


@pytest.mark.slow
@pytest.mark.parametrize(
    "bad, says",
    [
        (dict(doc_vectors=np.ones((6, 4)), query_vectors=np.ones((3, 5))), "dimension"),
        (dict(doc_ids=FRUIT_DOCS[:5], doc_vectors=np.ones((5, 4))), "1 of the dataset's 6 documents has no vector"),
        (dict(doc_vectors=np.full((6, 4), np.inf)), "infinite|NaN"),
        (
            dict(doc_vectors=np.ones((6, 4097)), query_vectors=np.ones((3, 4097))),
            "4,097 dimensions, above the 4,096 limit",
        ),
        (dict(doc_ids=[*FRUIT_DOCS, "d7"], doc_vectors=np.ones((7, 4))), "7 rows, more than the dataset's 6 documents"),
    ],
)
def test_bad_embeddings_get_one_message_naming_the_file_and_the_dataset_stays(bad, says):
    import re

    at = fruit()
    arrays = dict(
        doc_ids=FRUIT_DOCS, doc_vectors=np.ones((6, 4)), query_ids=FRUIT_QUESTIONS, query_vectors=np.ones((3, 4))
    )
    arrays.update(bad)
    upload(at, ui_dense.KEY_UPLOAD, [("bad.npz", npz(**arrays), "application/octet-stream")])
    next(b for b in at.button if b.label == "Use these embeddings").click().run()
    assert not at.exception
    errors = [shown(e.value) for e in at.error]
    assert len(errors) == 1 and "bad.npz" in errors[0] and re.search(says, errors[0]), errors
    assert "**fruit**" in at.caption[0].value  # still the dataset in use
    assert not any("The system **dense** ranks by cosine" in i.value for i in at.info)


def test_cancel_stops_the_encoding_at_once_keeps_what_was_loaded_and_says_so(monkeypatch):
    """The encoder held inside its first batch (as a long one on a busy machine): Cancel ends the page's wait at
    once, says where it stopped and that the session is as it was; the thread then stops at the batch's end,
    leaving no vectors kept or cached; the encoding can be started again."""
    import threading

    from retrieval.corpus import dataset
    from retrieval.retrievers import dense

    inside, release = threading.Event(), threading.Event()

    def held(texts):
        inside.set()
        release.wait(60)
        return np.ones((len(texts), 384), np.float32) / np.sqrt(384)

    monkeypatch.setattr(dense, "encode_passages", held)
    at = fruit()
    next(b for b in at.button if b.label == "Encode with the bundled model").click().run()
    ds = dataset.load_beir_zip(beir_zip(), "fruit.zip")
    job = ui_dense.job_of(ds)
    assert inside.wait(60) and job.running
    at.run()
    progress = " ".join(str(p.proto.text) for p in at.get("progress"))
    assert (
        "0 of 6 documents" in progress and "estimated before starting, measured again after the first batch" in progress
    )
    next(b for b in at.button if b.label == "Cancel").click().run()
    assert not at.exception and not job.running and job.thread.is_alive()  # the page is free; the batch goes on
    said = " ".join(i.value for i in at.info)
    assert "Encoding cancelled after 0 of 6 documents" in said and "nothing of it is kept or cached" in said
    assert "**fruit** and its systems, without dense" in said and "ends the batch it is in" in said
    assert "**fruit**" in at.caption[0].value  # the dataset in use stays
    assert "Encode with the bundled model" in [b.label for b in at.button]  # it can be started again
    release.set()
    job.thread.join(30)
    assert not job.thread.is_alive() and job.result is None and job.error is None
    assert not dense.documents_ready(ds)  # nothing cached
    at.run()
    assert not any("The system **dense** ranks by cosine" in i.value for i in at.info)
    assert "dense" not in to_overview(at).dataframe[0].value.index


def test_the_progress_says_the_estimate_before_starting_then_the_live_time_left():
    job = ui_dense.Job("k", 1400, estimate=251.0)
    assert ui_dense.progress_text(job) == (
        "0 of 1,400 documents; 4 min 11 s estimated before starting, measured again after the first batch"
    )
    job.progress(32, 1400, 2.5, 547.0)
    job.elapsed = 13.0
    assert ui_dense.progress_text(job) == (
        "32 of 1,400 documents, 2.5 a second now, about 9 min 7 s left (9 min 20 s "
        "in all; 4 min 11 s estimated before starting)"
    )
    job.cancel()
    job.progress(48, 1400, 2.5, 540.0)  # the batch in progress when Cancel was pressed: not counted
    assert (job.done, job.cancelled, job.running) == (32, True, False)
