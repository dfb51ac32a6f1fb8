"""What a page sends stays bounded whatever the documents' length: a corpus of 2 MB documents (93 of them once
made the Data preview exceed Streamlit's 200 MB message limit) is previewed cut, and one document at a time is
read in full up to FULL_CHARS, saying when even that is cut."""

from __future__ import annotations

import pytest
from test_page_data import beir_zip, upload

from apptest import frame_with, open_app, shown
from retrieval.retrievers import dense as retrieval_dense
from ui.format import FULL_CHARS, PREVIEW_CHARS, clip, full_text_note

pytestmark = pytest.mark.app

DOC_CHARS = 2_000_000
WORDS = ["apple", "pear", "cherry", "plum"]
DOCS = [(f"d{i}", (f"{w} tree {w}{i} " * (DOC_CHARS // (len(w) * 2 + 8)))[:DOC_CHARS]) for i, w in enumerate(WORDS)]
QUERIES = [("q1", "apple tree"), ("q2", "pear"), ("q3", "cherry plum")]
QRELS = [("q1", "d0", 1), ("q2", "d1", 1), ("q3", "d2", 1), ("q3", "d3", 1)]
PAGE_BYTES = 2 * FULL_CHARS + 1_000_000  # one document in full, and everything else well under a megabyte


def test_clip_cuts_and_says_the_length():
    assert clip("short") == "short"
    assert clip("x" * 600) == "x" * PREVIEW_CHARS + "… (600 characters in all)"
    assert clip("x" * 10, 4) == "xxxx… (10 characters in all)"
    assert full_text_note("abc") == "3 characters."
    assert (
        full_text_note("x" * (FULL_CHARS + 1))
        == f"{FULL_CHARS + 1:,} characters; only the first {FULL_CHARS:,} are shown."
    )


def elements(block):
    """Every element under a block of the page, depth first."""
    for child in block.children.values():
        if hasattr(child, "children") and child.children:
            yield from elements(child)
        else:
            yield child


def page_bytes(at) -> int:
    """What the page's elements hold, in protobuf bytes (what goes to the browser)."""
    return sum(e.proto.ByteSize() for block in (at.main, at.sidebar) for e in elements(block) if hasattr(e, "proto"))


def loaded(at, i: int) -> tuple[str, int]:
    """Document i as the dataset holds it (the loader strips the ends) and its length, about 2 MB."""
    text = at.session_state["dataset"].doc_texts[i]
    assert len(text) > 9 * FULL_CHARS
    return text, len(text)


def longest_cell(at) -> int:
    return max((len(str(v)) for df in at.dataframe for col in df.value.columns for v in df.value[col]), default=0)


@pytest.fixture(scope="module")
def long_docs():
    """The app with the long documents. The Data page's dense section estimates the bundled encoder's time
    (a rate timed on this machine, times the tokens counted on a sample): that estimate is not what this module
    measures, so it answers a fixed hour here."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(retrieval_dense, "corpus_tokens", lambda ds, sample=None: 3600.0)
        mp.setattr(retrieval_dense, "_RATE", [1.0])  # the rate in force: 1 s a token
        at = open_app("pages/data.py")
        upload(at, "data_zip", ("long.zip", beir_zip(DOCS, QUERIES, QRELS), "application/zip"))
        assert at.session_state["dataset"].n_docs == len(DOCS)
        yield at


def test_the_data_preview_cuts_each_text_and_reads_one_in_full(long_docs):
    at = long_docs
    at.switch_page("pages/data.py").run()
    text, n = loaded(at, 0)
    preview = frame_with(at, "text")
    assert list(preview["id"]) == [d for d, _ in DOCS]
    assert preview.iloc[0]["text"] == text[:PREVIEW_CHARS] + f"… ({n:,} characters in all)"
    assert at.text[0].value == text[:FULL_CHARS] + f"… ({n:,} characters in all)"
    assert f"{n:,} characters; only the first {FULL_CHARS:,} are shown." in [shown(c.value) for c in at.caption]
    at.selectbox(key="data_doc_full").set_value(2).run()
    assert at.text[0].value == clip(loaded(at, 2)[0], FULL_CHARS)
    assert longest_cell(at) <= PREVIEW_CHARS + 40
    assert page_bytes(at) < PAGE_BYTES


@pytest.mark.parametrize(
    "page", ["pages/per_question.py", "pages/diagnosis.py", "pages/tuning.py", "pages/overview.py", "pages/compare.py"]
)
def test_every_page_showing_documents_stays_bounded(long_docs, page):
    at = long_docs
    at.switch_page(page).run()
    assert not at.exception
    assert longest_cell(at) <= PREVIEW_CHARS + 40
    assert all(len(t.value) <= FULL_CHARS + 40 for t in at.text)
    assert all(len(m.value) <= 20 * PREVIEW_CHARS for m in (*at.markdown, *at.caption)), max(
        len(m.value) for m in at.markdown
    )
    assert page_bytes(at) < PAGE_BYTES


def test_per_question_reads_a_document_in_full_up_to_the_bound(long_docs):
    at = long_docs
    at.switch_page("pages/per_question.py").run()
    at.selectbox(key="pq_doc").set_value("d0").run()
    text, n = loaded(at, 0)
    assert at.text[0].value == text[:FULL_CHARS] + f"… ({n:,} characters in all)"
    assert f"{n:,} characters; only the first {FULL_CHARS:,} are shown." in [shown(c.value) for c in at.caption]


def test_diagnosis_shows_each_document_cut(long_docs):
    at = long_docs
    at.switch_page("pages/diagnosis.py").run()
    boxes = [shown(m.value) for m in at.markdown if "characters in all" in shown(m.value)]
    lengths = {len(t) for t in at.session_state["dataset"].doc_texts}
    assert boxes and all(any(b.endswith(f"… ({n:,} characters in all)") for n in lengths) for b in boxes), boxes
