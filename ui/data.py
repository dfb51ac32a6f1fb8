"""The Data page's parts: the uploads (a dataset as a BEIR zip or three files, TREC runs as extra systems, or judgements
alone: a qrels file with no documents), each handled once in a callback, the preview, the statistics and the downloads
with the same report's command line."""

from __future__ import annotations

import dataclasses
import functools
import json
import re
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
import streamlit as st

from retrieval.core.errors import InputError
from retrieval.core.params import Params
from retrieval.corpus import statistics as corpus_statistics
from retrieval.corpus.dataset import Dataset
from retrieval.corpus.judged import has_documents
from retrieval.corpus.runs import TIES, TIES_DEFAULT, TrecRun
from retrieval.evaluation import report
from retrieval.retrievers.systems import SYSTEMS

from . import cache, charts, dense, live, no_documents, state, workspace
from .format import FULL_CHARS, PREVIEW_CHARS, agree, clip, full_text_note, mb, plural
from .markdown import escape_markdown as plain

PREVIEW_ROWS = 100
DONE = "data_done"  # uploader -> token of the upload last processed (file ids), so a rerun never re-processes it
SOURCE = "data_source"  # (fingerprint, file name) of the uploaded dataset, for the command line shown
RUN_FILES = "data_run_files"  # run name -> the file it came from
JUDGEMENTS_FILE = "data_judgements_file"  # the file name of the judgements uploaded alone, for the command line
ICONS = {
    "error": ":material/error:",
    "warning": ":material/warning:",
    "success": ":material/check_circle:",
    "info": ":material/info:",
}
RECORDS = ["csv", "tsv", "jsonl", "json", "ndjson", "txt"]  # the file types of documents and questions


RUN_TIES = "data_run_ties"  # the tie rule of the runs added from now on
TIES_LABELS = {
    "docid-asc": "document id ascending (the article's rule)",
    "trec_eval": "document id descending (trec_eval's)",
}


def init() -> None:
    """The page's own session keys."""
    st.session_state.setdefault(RUN_TIES, TIES_DEFAULT)
    st.session_state.setdefault(DONE, {})
    st.session_state.setdefault(RUN_FILES, {})


# ------------------------------------------------------------------------------------------ pure helpers


def run_lines(run: TrecRun) -> int:
    """How many result lines a run holds."""
    return run.n_lines


def download_stem(dataset_name: str) -> str:
    """The start of every downloaded file's name: the dataset's name with anything but [A-Za-z0-9._-] as _."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", dataset_name) or "dataset"


def cli_data_arg(uploaded: bool, source: tuple | None, fingerprint: str) -> str | None:
    """What the command line's --data names: invented, the uploaded zip's file, or None for three files."""
    if not uploaded:
        return "invented"
    if source and source[0] == fingerprint and source[1]:
        return source[1]
    return None


def stat_notes(s) -> list[str]:
    """The statistics worth a notice: questions left out of the means, judgements and documents no system can find."""
    notes = []
    if s.questions_without_relevant:
        n = s.questions_without_relevant
        notes.append(
            f"{plural(n, 'question')} {agree(n, 'has', 'have')} no relevant document: {agree(n, 'it is', 'they are')} "
            "left out of every mean."
        )
    if s.judgements_outside_corpus:
        n = s.judgements_outside_corpus
        notes.append(
            f"{plural(n, 'judgement')} {agree(n, 'names a document that is', 'name documents that are')} not in "
            f"the corpus: no system can find {agree(n, 'it', 'them')}."
        )
    if s.empty_documents:
        n = s.empty_documents
        notes.append(
            f"{plural(n, 'document')} {agree(n, 'holds', 'hold')} no token after the tokeniser: no lexical system "
            f"can find {agree(n, 'it', 'them')}."
        )
    return notes


def texts_preview(ids, texts, n: int) -> pd.DataFrame:
    """The first n ids and texts, each text cut at PREVIEW_CHARS (saying its full length): a page of long
    documents stays far below Streamlit's message limit."""
    return pd.DataFrame({"id": ids[:n], "text": [clip(t) for t in texts[:n]]})


def judgements_preview(ds: Dataset, n: int) -> pd.DataFrame:
    """The first n judgements: question id, document id, grade and whether the corpus holds the document."""
    qr = ds.qrels
    return pd.DataFrame(
        {
            "question": [ds.query_ids[q] for q in qr.query[:n]],
            "document": qr.doc_id[:n].tolist(),
            "grade": qr.grade[:n],
            "in corpus": qr.doc[:n] >= 0,
        }
    )


def unjudged_frame(rows: list, k: int) -> pd.DataFrame:
    """One row per system: its results in the top k, how many of them are unjudged, and the share."""
    return pd.DataFrame(
        {
            "system": [u.system for u in rows],
            f"results in the top {k}": [u.results for u in rows],
            "unjudged": [u.unjudged for u in rows],
            "share unjudged": [u.share for u in rows],
        }
    )


def unjudged_columns(k: int) -> dict:
    """How `unjudged_frame` is shown: narrow columns under short headings, the frame's names in their help (at 1024
    px the four fit in half the page; the long headings were cut there, "results in th", "share unju"), the counts
    with the reader's thousands separator as the statistics above them."""
    cc = st.column_config
    return {
        "system": cc.Column(width="small"),
        f"results in the top {k}": cc.NumberColumn(
            f"top {k}",
            format="localized",
            width="small",
            help=f"Results in the top {k}, over the questions with a relevant document.",
        ),
        "unjudged": cc.NumberColumn(
            "unjudged", format="localized", width="small", help="Of those results, the ones no judgement names."
        ),
        "share unjudged": cc.ProgressColumn(
            "share",
            format="percent",
            min_value=0.0,
            max_value=1.0,
            width="small",
            help=f"Unjudged results / results in the top {k}.",
        ),
    }


# ------------------------------------------------------------------------------------------ messages


def say(kind: str, text: str) -> None:
    """Show one upload message: error, warning, success or info (the text escaped)."""
    getattr(st, kind)(plain(text), icon=ICONS[kind])


def post(messages: list[tuple[str, str]], ds: Dataset) -> None:
    """Keep the upload messages (kind, text) until the next upload, while `ds` stays the dataset in use."""
    state.post(messages, ds.fingerprint)


def show_messages(ds: Dataset) -> None:
    """The last upload's messages, unless the dataset changed since (the sidebar went back to the invented corpus)."""
    if st.session_state.get(state.MESSAGES_FOR) in (
        ds.fingerprint,
        cache.base_dataset().fingerprint,
    ):  # or graded since
        for kind, text in st.session_state[state.UPLOAD_MESSAGES]:
            say(kind, text)


def _fail(message: str, old: Dataset) -> None:
    """Keep the dataset in use and say why the upload was refused (shown until the next upload)."""
    post(
        [
            ("error", message),
            (
                "info",
                f"Still using {old.name} ({plural(old.n_docs, 'document')}, {plural(old.n_queries, 'question')}).",
            ),
        ],
        old,
    )


# ------------------------------------------------------------------------------------------ uploads


def load_dataset(files: list, parse: Callable[..., Dataset], source: str | None) -> None:
    """Read, parse, index and evaluate a new dataset by stages; on success make it the app's dataset.

    Called from the uploaders' callbacks, which run before app.py draws the sidebar: the whole app shows
    the new dataset in the same run. A bad file leaves the dataset in use as it was and says which file
    and line.
    """
    old = cache.current_dataset()
    label = ", ".join(f.name for f in files)
    times = {}
    parsed = None  # the parse's arguments once it returned (and Streamlit's cache kept it)
    with st.status(f"Loading {plain(label)}", expanded=True) as status:
        bar = st.progress(0.0, text="Reading")
        try:
            t = time.perf_counter()
            data = [f.getvalue() for f in files]
            size = sum(len(d) for d in data)
            times["reading"] = time.perf_counter() - t
            t = time.perf_counter()
            status.update(label=f"Parsing {plain(label)} ({mb(size)})", expanded=True)
            bar.progress(0.1, text=f"Parsing {mb(size)}")
            args = tuple(x for d, f in zip(data, files) for x in (d, f.name))
            ds = parse(*args)
            parsed = args
            times["parsing"] = time.perf_counter() - t
            st.write(
                f"Parsed {plural(ds.n_docs, 'document')}, {plural(ds.n_queries, 'question')}, "
                f"{plural(len(ds.qrels), 'judgement')} "
                f"in {times['parsing']:.2f} s"
            )
            t = time.perf_counter()
            status.update(label=f"Tokenising and indexing {plural(ds.n_docs, 'document')}", expanded=True)
            bar.progress(0.4, text="Tokenising and indexing")
            prep = cache.engine(
                ds,
                _progress=lambda stage, f: bar.progress(
                    0.4 + 0.3 * min(max(f, 0.0), 1.0), text=f"Tokenising and indexing: {stage}"
                ),
            )
            times["indexing"] = time.perf_counter() - t
            st.write(f"Indexed {plural(prep.n_terms, 'term')} in {times['indexing']:.2f} s")
            t = time.perf_counter()
            later = cache.waiting(ds)  # a large corpus: LSA's SVD is fitted in the background, the rest now
            now = "every system" if not later else "the systems that need no SVD"
            status.update(
                label=f"First evaluation: {now} for {plural(ds.n_queries, 'question')} at the current sliders",
                expanded=True,
            )
            bar.progress(0.7, text="Evaluating")
            if later:
                cache.fit_in_background(ds)
                cache.first_evaluation(report.report_metrics(state.cutoff(), state.metric_name()), ds=ds)
            else:
                cache.evaluation(report.report_metrics(state.cutoff(), state.metric_name()), ds=ds)
            times["evaluating"] = time.perf_counter() - t
            prep.intervals_ahead()  # the bootstrap's draws, for the first page's intervals
            bar.progress(1.0, text="Done")
            total = sum(times.values())
            status.update(label=f"Loaded {plain(ds.name)} in {total:.1f} s", state="complete", expanded=False)
        except InputError as e:
            status.update(label=f"{plain(label)}: not loaded", state="error", expanded=False)
            _fail(str(e), old)
            _drop_parse(parse, parsed)
            return
        except Exception as e:  # noqa: BLE001 - an upload must never take the loaded dataset down with it
            status.update(label=f"{plain(label)}: not loaded", state="error", expanded=False)
            _fail(
                f"{label}: not loaded: the app failed while loading it ({type(e).__name__}: {e}), an error of the "
                "app's, not a fault found in the file",
                old,
            )
            _drop_parse(parse, parsed)
            return
    msgs = [
        (
            "success",
            f"Loaded {ds.name}: {plural(ds.n_docs, 'document')}, {plural(ds.n_queries, 'question')}, "
            f"{plural(len(ds.qrels), 'judgement')} ({mb(size)} read in {times['reading']:.2f} s, parsed in "
            f"{times['parsing']:.2f} s, indexed in {times['indexing']:.2f} s, first evaluation "
            f"{times['evaluating']:.2f} s). Every page now uses it.",
        )
    ]
    if later:
        msgs.append(
            (
                "info",
                f"LSA's SVD on {plural(ds.n_docs, 'document')} started in the background at upload: until it is "
                f"done, the Overview and this page show the systems that need no fit first, then "
                f"{', '.join(later)}; other pages wait for it.",
            )
        )
    msgs += [("warning", w) for w in ds.warnings]
    msgs.append(workspace.keep_dataset(ds, list(zip(data, (f.name for f in files)))))
    runs = st.session_state[state.RUNS]
    for name, run in list(runs.items()):
        fits, why = report.run_fits(run, ds)
        if not fits:
            del runs[name]
            st.session_state[RUN_FILES].pop(name, None)
            msgs.append(("warning", f"Run {name} was removed: {why}."))
    st.session_state[state.DATASET] = ds
    st.session_state[SOURCE] = (ds.fingerprint, source)
    post(msgs, ds)
    # The d slider's maximum follows the dataset, so the sidebar draws a new widget; a value written here,
    # before it is drawn, carries over (otherwise the browser resets it to its minimum, 1).
    st.session_state[state.DIMS] = st.session_state[state.DIMS]


def load_judgements(file) -> None:
    """Make a qrels file uploaded alone the app's dataset: judgements with no documents, which score the run files
    uploaded beside them (no index, no engine). The runs already uploaded stay if some of their questions are judged.
    A bad file leaves the dataset in use as it was and says which file and line."""
    old = cache.current_dataset()
    data = file.getvalue()
    try:
        ds = cache.parse_qrels(data, file.name)
    except InputError as e:
        _fail(str(e), old)
        return
    msgs = [
        (
            "success",
            f"Loaded {ds.name}: judgements alone, {plural(ds.n_queries, 'question')}, "
            f"{plural(len(ds.qrels), 'judgement')} ({mb(len(data))}), no documents. Upload run files (the Run files "
            "tab) to score them: Overview, Compare and Per question use them; what reads text needs documents.",
        ),
        ("info", "Judgements alone are not kept in the workspace: a reload forgets them."),
    ]
    runs = st.session_state[state.RUNS]
    for name, run in list(runs.items()):
        fits, why = report.run_fits(run, ds)
        if not fits:
            del runs[name]
            st.session_state[RUN_FILES].pop(name, None)
            msgs.append(("warning", f"Run {name} was removed: {why}."))
    st.session_state[state.DATASET] = ds
    st.session_state[SOURCE] = (ds.fingerprint, None)
    st.session_state[JUDGEMENTS_FILE] = file.name
    post(msgs, ds)
    st.session_state[state.DIMS] = st.session_state[state.DIMS]


def _drop_parse(parse: Callable, args: tuple | None) -> None:
    """A refused upload leaves nothing cached: its parse, kept by Streamlit's cache when it returned (`args`: the
    arguments it was called with, None when it did not return), is dropped from it."""
    if args is not None:
        parse.clear(*args)


def _new(key: str, token: tuple) -> bool:
    """True once per upload: the file ids differ from the ones last processed for this uploader."""
    done = st.session_state[DONE]
    if done.get(key) == token:
        return False
    done[key] = token
    return True


def _forget(key: str) -> None:
    """The uploader is empty: the same file uploaded again later is a new upload."""
    st.session_state[DONE].pop(key, None)


def on_zip() -> None:
    """The zip uploader changed (callback)."""
    z = st.session_state.get("data_zip")
    if z is None:
        _forget("zip")
    elif _new("zip", (z.file_id,)):
        load_dataset([z], cache.parse_beir_zip, z.name)


def on_files() -> None:
    """One of the three file uploaders changed (callback): load once all three hold a file."""
    files = [st.session_state.get(k) for k in ("data_docs", "data_queries", "data_qrels")]
    if any(f is None for f in files):
        _forget("files")
    elif _new("files", tuple(f.file_id for f in files)):
        load_dataset(files, cache.parse_files, None)


def on_qrels() -> None:
    """The judgements-alone uploader changed (callback)."""
    f = st.session_state.get("data_qrels_alone")
    if f is None:
        _forget("qrels")
    elif _new("qrels", (f.file_id,)):
        load_judgements(f)


def on_runs() -> None:
    """The run uploader changed (callback): add the files not seen yet."""
    files = st.session_state.get("data_runs") or []
    done = st.session_state[DONE].get("runs", frozenset())
    st.session_state[DONE]["runs"] = frozenset(f.file_id for f in files)  # a file removed and added again is new
    fresh = [f for f in files if f.file_id not in done]
    if fresh:
        add_runs(fresh)


def add_runs(files: list) -> None:
    """Parse newly uploaded run files and add those that fit the dataset as systems."""
    ds = cache.current_dataset()
    runs = st.session_state[state.RUNS]
    msgs, added = [], []
    for f in files:
        try:
            run = cache.parse_run(f.getvalue(), f.name, None, st.session_state.get(RUN_TIES, TIES_DEFAULT))
        except InputError as e:
            msgs.append(("error", str(e)))
            continue
        fits, why = report.run_fits(run, ds)
        if not fits:
            msgs.append(("error", f"{f.name}: not added: {why}."))
            _drop_parse(cache.parse_run, (f.getvalue(), f.name, None, run.ties))
            continue
        if has_documents(ds):
            run, not_kept = workspace.keep_run(run, f.getvalue(), f.name, set(SYSTEMS) | set(runs))
        else:  # judgements alone are not stored, nor their runs
            wanted = workspace.unique_name(run.name, workspace.file_stem(f.name), set(SYSTEMS) | set(runs))
            run, not_kept = dataclasses.replace(run, name=wanted), None
        name = run.name
        runs[name] = run
        st.session_state[RUN_FILES][name] = f.name
        added.append(name)
        msgs.append(
            (
                "success",
                f"Added the run {name} from {f.name}: {plural(len(run.query_ids), 'question')}, {plural(run_lines(run), 'line')}.",
            )
        )
        if not_kept:
            msgs.append(("warning", not_kept))
    if added:
        ranks = cache.rankings()
        msgs += [("warning", w) for name in added for w in ranks[name].warnings]
    if msgs:
        post(msgs, ds)


def rename(old: str) -> None:
    """A run's name field changed (callback): rename the system, unless the name is empty or taken."""
    key = f"data_run_name:{old}"
    new = st.session_state[key].strip()
    runs = st.session_state[state.RUNS]
    if new == old or old not in runs:
        return
    if not new or new in SYSTEMS or new in runs:
        st.session_state[key] = old
        why = "empty" if not new else "already taken"
        post([("error", f"Run {old} keeps its name: {new!r} is {why}.")], cache.current_dataset())
        return
    st.session_state[state.RUNS] = {
        (new if n == old else n): (dataclasses.replace(r, name=new) if n == old else r) for n, r in runs.items()
    }
    files = st.session_state[RUN_FILES]
    files[new] = files.pop(old, "")
    not_kept = workspace.rename_run(old, new)
    post(
        [("success", f"Run {old} is now called {new}.")] + ([("warning", not_kept)] if not_kept else []),
        cache.current_dataset(),
    )


def remove(name: str) -> None:
    """Drop one uploaded run (callback)."""
    st.session_state[state.RUNS].pop(name, None)
    st.session_state[RUN_FILES].pop(name, None)
    there = workspace.drop_run(name)
    post([("info", f"Run {name} was removed." + (f" {there}" if there else ""))], cache.current_dataset())


# ------------------------------------------------------------------------------------------ sections


def header(ds: Dataset) -> None:
    """The title and the dataset in use."""
    st.title("Data")
    uploaded = st.session_state.get(state.DATASET) is not None
    st.caption(
        f"In use: **{plain(ds.name)}**, "
        + (plural(ds.n_docs, "document") if has_documents(ds) else "judgements alone (no documents)")
        + f", {plural(ds.n_queries, 'question')}, "
        f"{plural(len(ds.qrels), 'judgement')}"
        + ("" if uploaded else " (the invented corpus shipped with the app)")
        + f"; {len(st.session_state[state.RUNS])} uploaded run files. An upload replaces it on every page"
        + ("; the sidebar's button goes back to the invented corpus." if uploaded else ".")
    )


def uploads() -> None:
    """The upload tabs: a BEIR zip, three files, run files (with the uploaded runs to rename or remove), and
    judgements alone (a qrels file with no documents, to score the run files)."""
    st.subheader("Upload")
    # keyed, so the chosen tab survives the reruns an upload causes (an untracked tab set resets to its first tab)
    tab_zip, tab_files, tab_runs, tab_qrels = st.tabs(
        ["BEIR zip", "Three files", "Run files (extra systems)", "Judgements alone"],
        key="data_upload_tab",
        on_change="rerun",
    )
    with tab_zip:
        st.file_uploader(
            "A BEIR dataset as a .zip",
            type=["zip"],
            key="data_zip",
            on_change=on_zip,
            help="corpus.jsonl (_id, title, text), queries.jsonl (_id, text) and qrels/test.tsv "
            "(query-id, corpus-id, score), at the top of the zip or inside one folder.",
        )
    with tab_files:
        three_files()
    with tab_runs:
        run_files()
    with tab_qrels:
        st.file_uploader(
            "Judgements with no documents (TREC qrels or a BEIR tsv)",
            key="data_qrels_alone",
            on_change=on_qrels,
            help="An engine's runs scored on judgements alone, as trec_eval scores them: upload the qrels here and "
            "the runs in the Run files tab. Overview, Compare and Per question score the runs; BM25, LSA, dense, "
            "the Playground, the diagnosis by words and the Tour need documents.",
        )


def three_files() -> None:
    """Documents, questions and judgements as three uploads, loaded once all three are there."""
    st.caption(
        "Documents and questions: CSV or TSV with a header naming the columns id and text (title optional), "
        "or JSONL with _id (or id), title and text. Judgements: TREC qrels (qid 0 docid grade) or a BEIR "
        "tsv (query-id corpus-id score); grade 0 means judged not relevant."
    )
    c1, c2, c3 = st.columns(3)
    fd = c1.file_uploader("Documents", type=RECORDS, key="data_docs", on_change=on_files)
    fq = c2.file_uploader("Questions", type=RECORDS, key="data_queries", on_change=on_files)
    fj = c3.file_uploader(
        "Judgements", key="data_qrels", on_change=on_files, help="TREC qrels or BEIR tsv, any file name."
    )
    missing = [n for n, f in (("documents", fd), ("questions", fq), ("judgements", fj)) if f is None]
    if 0 < len(missing) < 3:
        st.caption(f"Waiting for: {', '.join(missing)}.")


def run_files() -> None:
    """The run uploader and the runs uploaded so far, each with its name field and a remove button."""
    st.file_uploader(
        "TREC run files",
        accept_multiple_files=True,
        key="data_runs",
        on_change=on_runs,
        help="One line per result: qid Q0 docid rank score tag (plain or gzipped), a ranx/ir_measures JSON or a Parquet (qid, docid, score) "
        "run. Each file becomes a system named after its tag (or the file name; editable below). A run is ranked "
        "by score, descending, ties by the rule below; the rank column is ignored, as trec_eval ignores it.",
    )
    st.radio(
        "Tied scores in a run",
        TIES,
        key=RUN_TIES,
        horizontal=True,
        format_func=TIES_LABELS.get,
        help="How a run added from now on ranks documents with the same score: by document id ascending (the "
        "article's rule, the built-in systems' too) or descending, as trec_eval and pytrec_eval rank them, to "
        "reproduce a paper's trec_eval numbers.",
    )
    runs = st.session_state[state.RUNS]
    if runs:
        st.caption("Uploaded runs (they stay when the files are removed from the box above):")
    for name, run in runs.items():
        a, b, c = st.columns([3, 4, 1], vertical_alignment="bottom")
        a.text_input("system name", value=name, key=f"data_run_name:{name}", on_change=rename, args=(name,))
        src = st.session_state[RUN_FILES].get(name, "")
        tied = (
            f"; ties in {plural(run.tied_questions, 'question')}, {TIES_LABELS[run.ties]}" if run.tied_questions else ""
        )
        b.caption(f"{plain(src)}: {plural(len(run.query_ids), 'question')}, {plural(run_lines(run), 'line')}{tied}")
        c.button("Remove", key=f"data_run_remove:{name}", on_click=remove, args=(name,), width="stretch")


def preview(ds: Dataset) -> None:
    """The first rows of the documents, the questions and the judgements."""
    st.subheader("Preview")
    t_docs, t_q, t_j = st.tabs(["Documents", "Questions", "Judgements"])
    text_col = {"text": st.column_config.TextColumn("text", width="large")}
    with t_docs:
        if not has_documents(ds):
            no_documents.needs_documents(ds, "A preview of the documents")
        n = min(PREVIEW_ROWS, ds.n_docs)
        st.dataframe(
            texts_preview(ds.doc_ids, ds.doc_texts, n), hide_index=True, width="stretch", column_config=text_col
        )
        st.caption(
            f"The first {n:,} of {plural(ds.n_docs, 'document')} (title and text joined, as BEIR does), each cut at "
            f"{PREVIEW_CHARS:,} characters."
        )
        if n:
            read_in_full(ds, n)
    with t_q:
        n = min(PREVIEW_ROWS, ds.n_queries)
        st.dataframe(
            texts_preview(ds.query_ids, ds.query_texts, n), hide_index=True, width="stretch", column_config=text_col
        )
        st.caption(f"The first {n:,} of {plural(ds.n_queries, 'question')}, each cut at {PREVIEW_CHARS:,} characters.")
    with t_j:
        n = min(PREVIEW_ROWS, len(ds.qrels))
        st.dataframe(judgements_preview(ds, n), hide_index=True, width="stretch")
        st.caption(
            f"The first {n:,} of {plural(len(ds.qrels), 'judgement')}, by question. A grade of 0 or less is judged not relevant."
        )


def read_in_full(ds: Dataset, n: int) -> None:
    """One of the previewed documents in full (up to FULL_CHARS), as plain text."""
    with st.expander("Read a document in full"):
        j = st.selectbox("Document", range(n), format_func=lambda i: ds.doc_ids[i], key="data_doc_full")
        if j is not None:
            st.text(clip(ds.doc_texts[j], FULL_CHARS), width="stretch")
            st.caption(full_text_note(ds.doc_texts[j]))


def statistics(ds: Dataset, later: tuple[str, ...] = ()) -> None:
    """The corpus's figures, notices for what no system can find, relevant documents per question and the
    unjudged documents in each system's top k (with `later`, the systems waiting on LSA's fit, `cache.waiting`:
    those of the others, the waiting ones named)."""
    st.subheader("Statistics")
    if not has_documents(ds):
        judged_statistics(ds)
        return
    s = cache.engine(ds).stats()
    cols = st.columns(3) + st.columns(3)  # two rows: six in one cut "100,000" to "10…" at 1024 px
    cols[0].metric("documents", f"{s.documents:,}")
    cols[1].metric(
        "questions",
        f"{s.questions:,}",
        help=f"{s.questions_evaluated:,} have a relevant document; every mean is over those.",
    )
    cols[2].metric("judgements", f"{s.judgements:,}", help=f"{s.relevant_judgements:,} of them relevant (grade > 0).")
    cols[3].metric(
        "vocabulary",
        f"{s.vocabulary:,}",
        help="Distinct terms after the tokeniser: lower case, [a-z0-9]+, stop words removed.",
    )
    cols[4].metric("mean length", f"{s.doc_len_mean:,.1f}", help="Tokens per document, stop words removed.")
    cols[5].metric(
        "median length",
        f"{s.doc_len_median:,.0f}",
        help=f"Tokens per document, stop words removed; the longest has {s.doc_len_max:,}.",
    )
    for note in stat_notes(s):
        st.info(note, icon=":material/info:")

    left, right = st.columns([4, 5], gap="medium")  # the table of four columns takes the wider half
    judged, relevant = corpus_statistics.judgements_per_question(ds)
    with left:
        st.markdown("**Relevant documents per question**")
        hist = pd.DataFrame(corpus_statistics.histogram(relevant), columns=["relevant documents", "questions"])
        st.altair_chart(charts.relevant_histogram(hist), width="stretch")
        st.caption(
            f"Judged documents per question (any grade): median {np.median(judged):g}, "
            f"min {judged.min():,}, max {judged.max():,}."
        )
    k = state.cutoff()
    with right:
        st.markdown(f"**Unjudged documents in the top {k}**")
        ranks = cache.first_rankings(ds) if later else cache.rankings()
        rows = [report.unjudged_at_k(ds, r, k, name) for name, r in ranks.items()]
        st.dataframe(unjudged_frame(rows, k), hide_index=True, width="stretch", column_config=unjudged_columns(k))
        st.caption(
            "Over the questions with a relevant document. No judgement names these documents, so they count as "
            "not relevant: a system with many is measured pessimistically (the judgements were pooled from others)."
        )
        if later:
            st.caption(f"{', '.join(plain(n) for n in later)} {later_text(ds)}")


def judged_statistics(ds: Dataset) -> None:
    """The statistics of judgements alone: questions, judgements, relevant documents per question, and the
    unjudged results in each run's top k (the corpus's figures need documents)."""
    relevant_n = int(np.count_nonzero(ds.qrels.grade > 0))
    cols = st.columns(3)
    cols[0].metric("questions", f"{ds.n_queries:,}", help=f"{ds.evaluated.size:,} have a relevant document.")
    cols[1].metric("judgements", f"{len(ds.qrels):,}", help=f"{relevant_n:,} of them relevant (grade > 0).")
    cols[2].metric("runs", f"{len(cache.current_runs()):,}")
    no_documents.needs_documents(ds, "A count of the vocabulary and document lengths")
    left, right = st.columns([4, 5], gap="medium")
    judged, relevant = corpus_statistics.judgements_per_question(ds)
    with left:
        st.markdown("**Relevant documents per question**")
        hist = pd.DataFrame(corpus_statistics.histogram(relevant), columns=["relevant documents", "questions"])
        st.altair_chart(charts.relevant_histogram(hist), width="stretch")
    k = state.cutoff()
    ranks = cache.rankings(ds)
    if ranks:
        with right:
            st.markdown(f"**Unjudged documents in the top {k}**")
            rows = [report.unjudged_at_k(ds, r, k, name) for name, r in ranks.items()]
            st.dataframe(unjudged_frame(rows, k), hide_index=True, width="stretch", column_config=unjudged_columns(k))


def dense_section(ds: Dataset) -> None:
    """The dense section, or on judgements alone the sentence saying it needs documents."""
    if has_documents(ds):
        dense.section(ds)
        return
    st.subheader("Dense retrieval")
    no_documents.needs_documents(ds, "Dense retrieval (vectors of the documents and questions)")


def follow_fit(ds: Dataset, later: tuple[str, ...]) -> None:
    """While LSA's SVD is fitted (`later`: `cache.waiting`, asked once by the page for all its parts), the parts
    that need it say they follow (the statistics' table, the downloads) and the page calls this once: the fit
    started in the background if it was not (the upload starts it), and the page set to run again once it is in
    (`live.rerun_when`; at once if it ended while the page ran). So the Data page draws everything else at once
    instead of holding its run until the fit is done (3 s at 100,000 documents)."""
    if later:
        cache.fit_in_background(ds)
        live.rerun_when(lambda: not cache.waiting(ds))


def later_text(ds: Dataset) -> str:
    """What the page says of the parts that wait on LSA's SVD."""
    return f"follow here once LSA's SVD on {plural(ds.n_docs, 'document')} is fitted (it runs in the background)."


def downloads(ds: Dataset, later: tuple[str, ...] = ()) -> None:
    """The metrics, per-question values and JSON report at the current sliders, each system's TREC run, and the
    command line that prints the same report (with `later`, the systems waiting on LSA's fit: a note that they
    follow)."""
    st.subheader("Downloads")
    if later:
        st.info(
            f"The downloads (every system's metrics, per-question values, JSON report and TREC run) {later_text(ds)}",
            icon=":material/hourglass_top:",
        )
        return
    chosen = state.metric_name()
    names = report.report_metrics(state.cutoff(), chosen)
    params = cache.ranking_params(ds) if has_documents(ds) else Params()  # runs alone: as `evaluate --qrels`
    ev = cache.evaluation(names)
    stem = download_stem(ds.name)
    settings = (
        f"; k1 = {params.k1:g}, b = {params.b:g}, d = {params.dims}, RRF k = {params.rrf_k:g}, alpha = {params.alpha:g}"
        if has_documents(ds)
        else ""  # judgements alone: the runs are scored as they are
    )
    st.caption(
        f"At the current sliders ({', '.join(state.metric_label(m) for m in names)}{settings}). "
        "Files are made when a button is clicked."
    )
    files = st.container(horizontal=True, wrap=True, gap="small")  # each button as wide as its text
    files.download_button(
        "Metrics (CSV)",
        functools.partial(report.metrics_csv, ev, names),
        file_name=f"{stem}_metrics.csv",
        mime="text/csv",
        key="data_dl_metrics",
        on_click="ignore",
        icon=":material/table:",
        width="content",
        help="One row per system, one column per metric: the means over the questions with a relevant document.",
    )
    files.download_button(
        "Per question (CSV)",
        functools.partial(report.per_question_csv, ev, names),
        file_name=f"{stem}_per_question.csv",
        mime="text/csv",
        key="data_dl_per_question",
        on_click="ignore",
        icon=":material/table_rows:",
        width="content",
        help="One row per system and question: the rank of the first relevant document (empty: not found) and every metric.",
    )
    uploaded = tuple(st.session_state[state.RUNS].values())  # read now: the file is made when it is downloaded
    # the bootstrap's pair: BM25 - LSA, or on judgements alone the first two runs (none with one run, as the CLI)
    pair = ("BM25", "LSA") if has_documents(ds) else (tuple(ev.systems[:2]) if len(ev.systems) >= 2 else None)
    files.download_button(
        "JSON report",
        lambda: json.dumps(report.json_report(ev, params, names, chosen, pair, runs=uploaded), indent=2),
        file_name=f"{stem}_report.json",
        mime="application/json",
        key="data_dl_json",
        on_click="ignore",
        icon=":material/data_object:",
        width="content",
        help="The report of `python -m retrieval evaluate --json`, "
        + (
            f"with the paired bootstrap {plain(pair[0])} - {plain(pair[1])} on {state.metric_label(chosen)}."
            if pair
            else "without a bootstrap (one run)."
        ),
    )
    st.markdown(
        "**Each system's ranking as a TREC run** (`qid Q0 docid rank score tag`, the top of each list as the app keeps it)"
    )
    ranks = cache.rankings()
    with st.container(horizontal=True, wrap=True, gap="small"):  # a run's name whole, however long
        for name, ranking in ranks.items():
            st.download_button(
                plain(name),
                functools.partial(report.trec_run, ranking, ds, name),
                file_name=f"{stem}_{report.run_tag(name)}.run",
                mime="text/plain",
                key=f"data_dl_run:{name}",
                on_click="ignore",
                icon=":material/download:",
                width="content",
            )
    base = cache.base_dataset()  # the dataset as loaded: the command line reads its files, not the Judge page's grades
    data_arg = cli_data_arg(
        st.session_state.get(state.DATASET) is not None, st.session_state.get(SOURCE), base.fingerprint
    )
    with st.expander("The same JSON report from the command line"):
        graded = len(cache.new_judgements(base))
        if graded:
            st.caption(
                f"It measures the loaded judgements: the {graded:,} grades given on the Judge page are not in "
                "its files (download them there, as qrels)."
            )
        if not has_documents(base):
            run_files = {n: st.session_state[RUN_FILES].get(n, f"{n}.run") for n in st.session_state[state.RUNS]}
            st.code(
                report.cli_qrels_command(
                    st.session_state.get(JUDGEMENTS_FILE, f"{base.name}.qrels"),
                    names,
                    chosen,
                    run_files,
                    compare=tuple(ev.systems[:2]) if len(ev.systems) >= 2 else None,
                    ties=report.ties_of(uploaded),
                ),
                language="bash",
                wrap_lines=True,
            )
        elif data_arg is None:
            st.caption("The command line reads a BEIR folder or zip; this dataset came as three files.")
        else:
            run_files = {n: st.session_state[RUN_FILES].get(n, f"{n}.run") for n in st.session_state[state.RUNS]}
            st.code(
                report.cli_command(
                    data_arg,
                    params,
                    names,
                    chosen,
                    run_files,
                    embeddings=dense.cli_value(ds),
                    ties=report.ties_of(uploaded),
                ),
                language="bash",
                wrap_lines=True,
            )
