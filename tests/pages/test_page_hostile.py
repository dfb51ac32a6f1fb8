"""Hostile names, ids and texts, uploaded as a stranger would, then every page visited: no Markdown-bearing
element AppTest exposes holds live markup (bold, KaTeX, links, images, colour, HTML, autolinked URLs).

The app writes bold of its own, so every bold the stranger writes starts with "zz": live bold is ``**zz`` (the highlighter's
``[**zztree**]`` of a matched word aside)."""

from __future__ import annotations

import io
import json
import re
import zipfile
from pathlib import Path

import pytest
from test_page_data import upload

from apptest import open_app, shown
from ui import state
from ui.markdown import escape_markdown, highlight_markdown

pytestmark = pytest.mark.app

HOSTILE_ZIP = "**zzb**$x$[l](http://e.x)![i](http://e.x/i.png):red[r].zip"
FOLDER = "**zzf**$y$[l](http:e.x)![i](www.e.x):red[f]<b>w</b>"  # a zip folder cannot hold '/'
DOC_IDS = ["<b>x</b>", "**zzy**", "[z](http://e.x)", "$k$", "http://evil.example/x", "plain"]
TEXTS = [
    "apple **zzpie** $x$ [l](http://e.x) <b>b</b> :red[r] http://evil.example apple",
    "apple tree ![i](http://e.x/i.png) **zztree**",
    "pear $$y$$ tree",
    "banana :red[bread] [b](http://e.x)",
    "cherry jam http://evil.example/jam",
    "apple jelly and jam",
]
QUERY_IDS = ["q**zz1**", "$q$", "[q](http://e.x)"]
QUERIES = ["apple **zztree** $t$", "bread [b](http://e.x)", "jam http://evil.example"]
QRELS = [
    (QUERY_IDS[0], DOC_IDS[1], 2),
    (QUERY_IDS[0], DOC_IDS[0], 1),
    (QUERY_IDS[1], DOC_IDS[3], 1),
    (QUERY_IDS[2], DOC_IDS[4], 1),
    (QUERY_IDS[2], "![g](http://e.x/g.png)", 1),
    (":red[uq]", DOC_IDS[2], 1),
]
TAG = "**zzt**[r](http://e.x)$t$"
TAG2 = "<b>u</b>:red[u]"


def hostile_zip() -> bytes:
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:
        z.writestr(
            f"{FOLDER}/corpus.jsonl",
            "".join(json.dumps({"_id": i, "title": "", "text": t}) + "\n" for i, t in zip(DOC_IDS, TEXTS)),
        )
        z.writestr(
            f"{FOLDER}/queries.jsonl",
            "".join(json.dumps({"_id": i, "text": t}) + "\n" for i, t in zip(QUERY_IDS, QUERIES)),
        )
        z.writestr(
            f"{FOLDER}/qrels/test.tsv",
            "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in QRELS),
        )
    return b.getvalue()


def run_file(tag: str, unknown: str) -> bytes:
    lines = []
    for q in QUERY_IDS:
        for r, d in enumerate([*DOC_IDS[::-1], unknown], 1):
            lines.append(f"{q} Q0 {d} {r} {10 - r} {tag}\n")
    return "".join(lines).encode()


_ESCAPED = re.compile(r"\\[!-/:-@\[-`{-~]")
_LIVE = [
    ("**", re.compile(r"(?<!\[)\*\*zz")),  # not the highlighter's own bold, `:green-background[**word**]`
    ("link", re.compile(r"\[[^\]]*\]\(")),
    ("image", re.compile(r"!\[")),
    ("KaTeX", re.compile(r"\$")),
    ("colour", re.compile(r":red\[")),
    ("HTML", re.compile(r"<b>", re.I)),
]


def live_markup(text: str) -> list[str]:
    """The live markup left in a Markdown body: what stays once the backslash escapes and the code spans (shown as
    typed) are taken out; a bare URL is live anywhere else."""
    rest = _ESCAPED.sub("\0", text)  # an escaped character is inert: a placeholder, so no markup spans it
    rest = re.sub(r"(`+).+?\1", "\0", rest)  # so is a code span
    found = [name for name, pattern in _LIVE if pattern.search(rest)]
    if re.search(r"https?://", rest):
        found.append("URL")
    return found


def test_the_check_finds_live_markup_and_passes_escaped_text():
    for raw in (HOSTILE_ZIP, TAG, TAG2, *DOC_IDS[:5], "see http://evil.example/x"):
        assert live_markup(raw), raw
        assert not live_markup(escape_markdown(raw)), raw
    assert live_markup("a **zzb** c") == ["**"] and live_markup(r"a \*\*zzb\*\* c") == []
    assert live_markup("**" + escape_markdown("**zzb**") + "**") == []  # the app's bold around an escaped name
    assert live_markup(highlight_markdown("**zzb** c", {"zzb": "green"})) == []
    assert live_markup("go http://e.x") == ["URL"]


TEXT_ELEMENTS = (
    "markdown",
    "caption",
    "info",
    "warning",
    "error",
    "success",
    "subheader",
    "title",
    "header",
    "exception",
)
WIDGETS = (
    "selectbox",
    "multiselect",
    "button",
    "download_button",
    "metric",
    "slider",
    "select_slider",
    "text_input",
    "number_input",
    "checkbox",
    "toggle",
    "radio",
    "text_area",
    "file_uploader",
    "segmented_control",
    "tab",
    "expandable",
    "status",
)


def markdown_bodies(at) -> list[tuple[str, str]]:
    """(where, text) of every body, label and tooltip on the page that Streamlit renders as Markdown."""
    out = []
    for kind in TEXT_ELEMENTS:
        for el in at.get(kind):
            out.append((kind, str(el.value) if kind != "exception" else el.message))
    for kind in WIDGETS:
        for el in at.get(kind):
            proto = el.proto
            for field in ("label", "help"):
                text = getattr(proto, field, "")
                if text:
                    out.append((f"{kind} {field}", text))
    return out


def assert_inert(at, page: str) -> int:
    assert not at.exception, [e.message for e in at.exception]
    bodies = markdown_bodies(at)
    bad = [(where, text, found) for where, text in bodies if (found := live_markup(text))]
    assert not bad, f"{page}:\n" + "\n".join(f"{where} {found}: {text!r}" for where, text, found in bad)
    return len(bodies)


PAGES = [
    "pages/overview.py",
    "pages/per_question.py",
    "pages/diagnosis.py",
    "pages/compare.py",
    "pages/tuning.py",
    "pages/metrics_lab.py",
    "pages/data.py",
]


@pytest.fixture(scope="module")
def hostile():
    """The app with the hostile zip and two hostile runs, every run fused (so the sidebar draws weight sliders)."""
    at = open_app("pages/data.py")
    upload(at, "data_zip", (HOSTILE_ZIP, hostile_zip(), "application/zip"))
    assert at.session_state[state.DATASET].n_docs == len(DOC_IDS)
    upload(
        at,
        "data_runs",
        [
            (f"{TAG}.run", run_file(TAG, ":red[ghost]"), "text/plain"),
            (f"{TAG2}.run", run_file(TAG2, "**zzghost**"), "text/plain"),
        ],
    )
    assert {TAG, TAG2} <= set(at.session_state[state.RUNS])
    at.sidebar.multiselect[0].set_value(["BM25", "LSA", TAG, TAG2]).run()
    return at


@pytest.mark.slow
def test_the_upload_messages_and_the_data_page_are_inert(hostile):
    at = hostile
    at.switch_page("pages/data.py").run()
    n = assert_inert(at, "data")
    assert n > 30
    assert any(TAG in (shown(d.proto.label)) for d in at.get("download_button"))


def shown_bodies(at) -> list[str]:
    return [shown(text) for _, text in markdown_bodies(at)]


@pytest.mark.slow  # the hostile fixture's upload and engine: 4.5 s on an idle machine, paid by the first page
@pytest.mark.parametrize("page", PAGES)
def test_every_page_is_inert(hostile, page):
    at = hostile
    at.switch_page(page).run()
    assert_inert(at, page)
    bodies = shown_bodies(at)  # the hostile strings are there, to be read as plain text
    assert f"**Dataset:** {Path(HOSTILE_ZIP).stem} — 6 documents, 3 questions" in bodies
    assert {f"weight of {TAG}", f"weight of {TAG2}"} <= set(bodies)


@pytest.mark.slow
def test_the_hostile_runs_and_questions_up_close(hostile):
    """The pages' selectors set to the hostile runs and questions, so their headers and labels are drawn."""
    at = hostile
    at.switch_page("pages/compare.py").run()
    at.selectbox[0].set_value(TAG).run()
    at.selectbox[1].set_value(TAG2).run()
    assert_inert(at, "compare, the two runs")
    assert f"A: {TAG}" in shown_bodies(at) and f"B: {TAG2}" in shown_bodies(at)
    for page, key, values, contains in (
        ("pages/per_question.py", "pq_question", [0, 1, 2], f"**{QUERY_IDS[2]}** — {QUERIES[2]}"),
        (
            "pages/diagnosis.py",
            "diag_question",
            QUERY_IDS,
            f"**{QRELS[4][1]}** · relevant, grade 1 · not in the corpus",
        ),
        ("pages/tuning.py", "tune_question", QUERY_IDS, f"**{QUERY_IDS[2]}**: {QUERIES[2]}"),
    ):
        at.switch_page(page).run()
        for value in values:
            at.selectbox(key=key).set_value(value).run()
            assert_inert(at, f"{page}, question {value}")
        assert any(b.startswith(contains) for b in shown_bodies(at)), (page, contains)


@pytest.mark.slow
def test_a_hostile_embeddings_file_name_is_inert(hostile):
    at = hostile
    at.switch_page("pages/data.py").run()
    upload(at, "dense_upload", [(f"{TAG}.npz", b"not an npz", "application/octet-stream")])
    at.button(key="dense_use").click().run()
    assert any(shown(e.value).startswith(f"{TAG}.npz") for e in at.error), [shown(e.value) for e in at.error]
    assert_inert(at, "data, bad embeddings")


@pytest.mark.slow
def test_judgements_alone_with_hostile_names_are_inert_on_every_page():
    """A qrels file uploaded alone (hostile file name, question and document ids) and two hostile runs: the pages
    that score runs and the pages that say they need documents show every name as plain text."""
    at = open_app("pages/data.py")
    qrels = "".join(f"{q} 0 {d} {g}\n" for q, d, g in QRELS).encode()
    name = HOSTILE_ZIP.replace(".zip", ".qrels")
    upload(at, "data_qrels_alone", (name, qrels, "text/plain"))
    judged = at.session_state[state.DATASET]
    assert judged.n_docs == 0 and judged.name == Path(name).stem
    upload(
        at,
        "data_runs",
        [
            (f"{TAG}.run", run_file(TAG, ":red[ghost]"), "text/plain"),
            (f"{TAG2}.run", run_file(TAG2, "x"), "text/plain"),
        ],
    )
    assert {TAG, TAG2} <= set(at.session_state[state.RUNS])
    for page in [*PAGES, "pages/playground.py", "pages/tour.py", "pages/judge.py"]:
        at.switch_page(page).run()
        assert_inert(at, page)
        assert f"**Dataset:** {judged.name} — 0 documents, 4 questions" in shown_bodies(at), (
            page,
            [b for b in shown_bodies(at) if "Dataset" in b],
        )
