"""The app's side of the workspace store (retrieval.store.workspace): the store, opened once per server; who the
person is; an upload kept; the link that names the dataset and runs in use, written on every run and followed when a
session opens on it; the Data page's list of the stored datasets.

A link is `?data=<the dataset's id>&run=<a stored run>&run=...&rule=<how the raters' grades combine>` besides the
sliders: opened in a fresh browser, or after a restart, it shows the same numbers (the grades are the workspace's, read
when the session opens the dataset; `rule` is in the link on every page, not only on the Judge page that sets it). When the store does not hold what it names, the page says so and what it
shows instead; the link is left as it was (every parameter in it kept).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import re
from datetime import UTC, datetime

import streamlit as st

from retrieval.analyses import experiments
from retrieval.core.errors import InputError
from retrieval.corpus import dataset as datasets
from retrieval.corpus import embeddings
from retrieval.corpus.dataset import Dataset, TrecRun
from retrieval.evaluation.agreement import RULES
from retrieval.store import access, transfer
from retrieval.store.access import USER_HEADER_ENV, Actor
from retrieval.store.workspace import (
    FILES,
    ZIP,
    DatasetEntry,
    ExperimentEntry,
    Grade,
    StoredFile,
    Workspace,
    default_url,
    open_workspace,
    trash_days,
)

from . import in_use, state
from .format import mb, plural
from .markdown import escape_markdown
from .rater import name_input

DATA = "data"  # the URL's dataset: its id in the store (Dataset.fingerprint); none for the invented corpus
RUN = "run"  # the URL's runs: a stored run's name, once per run in use
VECTORS = "vectors"  # the URL's embeddings: a stored embeddings upload's name
ANONYMOUS = "anonymous"


@st.cache_resource(show_spinner=False, max_entries=2)
def _opened(url: str) -> Workspace:
    """The store at url, opened (and migrated) once per server; an error is not kept, so a later run tries again."""
    return open_workspace(url)


def store() -> Workspace | None:
    """This server's store, or None when it cannot be opened (the reason in the session: `problem`)."""
    try:
        ws = _opened(default_url())
    except InputError as e:
        st.session_state[state.STORE_PROBLEM] = str(e)
        return None
    st.session_state.pop(state.STORE_PROBLEM, None)
    return ws


def problem() -> str | None:
    """Why the store could not be opened in this session, if it could not."""
    return st.session_state.get(state.STORE_PROBLEM)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def proxy_user() -> str | None:
    """The signed-in user's name from the authenticating proxy's header ($RETRIEVAL_LAB_USER_HEADER), if set."""
    header = os.environ.get(USER_HEADER_ENV, "").strip()
    if not header:
        return None
    value = _CONTROL.sub("", str(st.context.headers.get(header) or "")).strip()[:200]
    return value or None


def signed_out() -> bool:
    """Whether sign-in is configured ($RETRIEVAL_LAB_USER_HEADER) and this request came without the header: such a
    session may look, never change the workspace, and is never given a typed name."""
    return access.sign_in_configured() and proxy_user() is None


def signed_out_message() -> str:
    """What the pages say to a session without the sign-in header."""
    header = os.environ.get(USER_HEADER_ENV, "").strip()
    return (
        f"You are not signed in (the proxy sent no {header} header): you can look at the workspace but not "
        "change it. Sign in through the proxy to upload, grade or delete."
    )


def person() -> str:
    """Who is uploading or grading: the proxy's user; without sign-in configured, the name typed in this session,
    else "anonymous" (with sign-in configured, a request without the header is "anonymous" and may change
    nothing: `signed_out`)."""
    if access.sign_in_configured():
        return proxy_user() or ANONYMOUS
    typed = _CONTROL.sub("", str(st.session_state.get(state.RATER) or "")).strip()[:200]
    return typed or ANONYMOUS


def me() -> Actor:
    """This person as the store's permissions see them (`access.actor`): an admin when listed in
    $RETRIEVAL_LAB_ADMINS, or when no sign-in is configured (one person on a laptop)."""
    return access.actor(person())


# --------------------------------------------------------------------------------------------------- keeping


def file_stem(file_name: str) -> str:
    """A file's name without its last extension."""
    return file_name.rsplit(".", 1)[0] if "." in file_name else file_name


def unique_name(wanted: str, stem: str, taken: set[str]) -> str:
    """A system name not in `taken`: the run's tag, else its file stem, else the stem numbered from 2."""
    for name in (wanted, stem):
        if name and name not in taken:
            return name
    i = 2
    while f"{stem}-{i}" in taken:
        i += 1
    return f"{stem}-{i}"


def keep_dataset(ds: Dataset, files: list[tuple[bytes, str]]) -> tuple[str, str]:
    """Store an uploaded dataset with its files (one zip, or documents, questions and judgements); the Data page's
    message about it (kind, text)."""
    ws = store()
    if ws is None:
        return "warning", f"Not kept in the workspace ({problem()}): a reload forgets this upload."
    if signed_out():
        return "warning", f"Not kept in the workspace: {signed_out_message()} A reload forgets this upload."
    try:
        entry = ws.add_dataset(ds, ZIP if len(files) == 1 else FILES, [StoredFile(n, d) for d, n in files], person())
    except InputError as e:
        return "warning", f"Not kept in the workspace: {e}. It is in use in this session only: a reload forgets it."
    st.session_state[state.STORED] = entry.id
    return "info", (
        f"Kept in the workspace as {entry.name}: a reload, a server restart or a copy of this page's link "
        "opens it again."
    )


def _dataset_id(ws: Workspace, ds: Dataset) -> str:
    """The stored id of the dataset in use, storing it first when it is the invented corpus (runs are kept per
    dataset)."""
    if ws.dataset(ds.fingerprint) is None:
        ws.add_dataset(ds, ZIP, [StoredFile(f"{ds.name}.zip", datasets.beir_zip(ds))], person())
    return ds.fingerprint


def keep_run(run: TrecRun, data: bytes, file_name: str, taken: set[str]) -> tuple[TrecRun, str | None]:
    """Name an uploaded run of the dataset in use (`unique_name`: not among `taken`, the session's systems, nor the
    names the store gives other files of this dataset) and store it, unless the store holds this file under that name
    already; the run as named, and a warning if it could not be kept."""
    ws = store()
    if ws is None or signed_out():
        named = dataclasses.replace(run, name=unique_name(run.name, file_stem(file_name), taken))
        why = problem() if ws is None else signed_out_message()
        return named, f"Run {named.name} is not kept in the workspace ({why}): a reload forgets it."
    sha = hashlib.sha256(data).hexdigest()
    try:
        did = _dataset_id(ws, in_use.base_dataset())
        stored = {r.name: r.sha256 for r in ws.runs(did)}
        name = unique_name(run.name, file_stem(file_name), taken | {n for n, h in stored.items() if h != sha})
        if name not in stored:
            ws.add_run(did, name, StoredFile(file_name, data), person())
            st.session_state.setdefault(state.ADDED_RUNS, set()).add((did, name))
    except InputError as e:
        named = dataclasses.replace(run, name=unique_name(run.name, file_stem(file_name), taken))
        return named, f"Run {named.name} is not kept in the workspace: {e}. A reload forgets it."
    st.session_state[state.STORED] = did
    return dataclasses.replace(run, name=name), None


def keep_embeddings(files: list[tuple[str, bytes]]) -> str | None:
    """Store the embeddings the session now uses (their files, documents' then questions'), named after the first
    file and their content (the same files: the same name), so the link can name them; a warning if not kept."""
    ws = store()
    base = in_use.base_dataset()
    if ws is None or signed_out():
        why = problem() if ws is None else signed_out_message()
        return f"These embeddings are not kept in the workspace ({why}): a reload forgets them."
    digest = hashlib.sha256(b"".join(hashlib.sha256(d).digest() for _, d in files)).hexdigest()[:8]
    name = f"{file_stem(files[0][0])}-{digest}"
    try:
        did = _dataset_id(ws, base)
        if name not in {e.name for e in ws.embeddings(did)}:
            ws.add_embeddings(did, name, [StoredFile(n, d) for n, d in files], person())
    except InputError as e:
        return f"These embeddings are not kept in the workspace: {e}. A reload forgets them."
    st.session_state[state.STORED] = did
    st.session_state[state.VECTORS] = (did, name)
    return None


def _open_vectors(ws: Workspace, ds: Dataset, name: str) -> str | None:
    """Make a stored embeddings upload the session's dense source; a message if it cannot."""
    try:
        files = ws.embeddings_files(ds.fingerprint, name)
        aligned = embeddings.align(
            embeddings.load_files([(f.name, f.data) for f in files], embeddings.Limits.of(ds)), ds
        )
    except InputError as e:
        return f"This link names the embeddings {name}, which could not be opened: {e}"
    st.session_state[state.DENSE] = aligned
    st.session_state[state.VECTORS] = (ds.fingerprint, name)
    return None


def rename_run(old: str, new: str) -> str | None:
    """Rename a stored run of the dataset in use as the session renamed it; a warning if the store could not."""
    ws = store()
    if ws is None or ws.dataset(in_use.base_dataset().fingerprint) is None:
        return None
    did = in_use.base_dataset().fingerprint
    try:
        ws.rename_run(did, old, new, me())
    except InputError as e:
        return f"The workspace keeps the run as {old}: {e}."
    added = st.session_state.get(state.ADDED_RUNS, set())
    if (did, old) in added:
        added.discard((did, old))
        added.add((did, new))
    return None


def drop_run(name: str) -> str | None:
    """A run removed from the session: deleted from the workspace too when this session added it (an upload
    undone), else left there for the others; what happened to it there (None: nothing)."""
    did = in_use.base_dataset().fingerprint
    added = st.session_state.get(state.ADDED_RUNS, set())
    ws = store()
    if (did, name) not in added or ws is None:
        return None
    try:
        ws.delete_run(did, name, me())
    except InputError as e:
        return f"The workspace still holds run {name}: {e}."
    added.discard((did, name))
    return f"This session had added run {name} to the workspace: it is deleted there too."


# --------------------------------------------------------------------------------------------------- grades

MAX_GIVEN = 10_000  # grades one session may give (a bound on what a stranger can write into the store)
JUDGE_PAGE = "Judge"  # the page whose entry reads the grades again (its title in ui/router.py)
EXPERIMENTS_PAGE = "Experiments"  # the page whose entry reads the saved experiments
MAX_EXPERIMENTS = 50  # saved experiments of a dataset a session reads (the latest)


def read_grades(base: Dataset) -> None:
    """Read the workspace raters' grades of the loaded dataset into the session (`in_use.workspace_grades`): when
    it is opened, when the Judge page is entered or asks for them, and after a grade is given here; never on a
    slider's tick. Without a store the session keeps its own grades (a reload forgets them)."""
    held = st.session_state.setdefault(state.GRADES, {})
    ws = store()
    if ws is None:
        held.setdefault(base.fingerprint, ())
        return
    try:
        held[base.fingerprint] = tuple(ws.grades(base.fingerprint))
    except InputError as e:
        state.post([("error", str(e))], base.fingerprint)


def read_when_needed(page: str) -> None:
    """Read the workspace's grades of the loaded dataset the first time the session uses it, and when it enters the
    Judge page, or any page while the rule counts the raters' grades (other raters may have graded since: the page,
    and the link it shows, then count what a fresh session opening that link counts); its saved experiments when it
    enters the Experiments page. A rerun of the same page (a slider's tick) reads nothing."""
    base = in_use.base_dataset()
    entered = st.session_state.get(state.PAGE_SEEN) != page
    st.session_state[state.PAGE_SEEN] = page
    counted = in_use.rule() != in_use.DEFAULT_RULE
    if (entered and (page == JUDGE_PAGE or counted)) or base.fingerprint not in st.session_state.get(state.GRADES, {}):
        read_grades(base)
    if entered and page == EXPERIMENTS_PAGE:
        read_experiments(base)


def give_grade(base: Dataset, query_id: str, doc_id: str, grade: int | None) -> str | None:
    """This person's grade of a pair (None takes theirs back), kept in the workspace with their name and the time;
    the session's grades then read again (the other raters' new ones with them). A message when it was refused."""
    rater = person()
    if signed_out():
        return f"The grade was not kept: {signed_out_message()}"
    given = st.session_state.setdefault(state.GIVEN, 0)
    if grade is not None and given >= MAX_GIVEN:
        return f"This session has given {MAX_GIVEN:,} grades, the most it may: reload to give more."
    ws = store()
    if ws is None:
        mine = [
            g for g in in_use.workspace_grades(base) if not (g.query_id, g.doc_id, g.rater) == (query_id, doc_id, rater)
        ]
        if grade is not None:
            mine.append(Grade(query_id, doc_id, rater, int(grade), datetime.now(UTC)))
        st.session_state[state.GRADES][base.fingerprint] = tuple(mine)
    else:
        try:
            did = _dataset_id(ws, base)
            if grade is None:
                ws.take_back(did, query_id, doc_id, rater, me())
            else:
                ws.grade(did, query_id, doc_id, grade, rater)
        except InputError as e:
            return f"The grade was not kept: {e}"
        read_grades(base)
    if grade is not None:
        st.session_state[state.GIVEN] = given + 1
    return None


def take_back_all(base: Dataset) -> str | None:
    """Take back every grade this person gave the loaded dataset (one write), the session's grades read again; a
    message when it was refused."""
    rater = person()
    if signed_out():
        return f"The grades were not taken back: {signed_out_message()}"
    ws = store()
    if ws is None:
        kept = tuple(g for g in in_use.workspace_grades(base) if g.rater != rater)
        st.session_state.setdefault(state.GRADES, {})[base.fingerprint] = kept
        return None
    try:
        ws.take_back_all(base.fingerprint, rater, me())
    except InputError as e:
        return f"The grades were not taken back: {e}"
    read_grades(base)
    return None


# ----------------------------------------------------------------------------------------------- experiments


def read_experiments(base: Dataset) -> None:
    """Read the latest MAX_EXPERIMENTS saved experiments of the loaded dataset into the session: those that are saved
    views (`experiments.readable`), and for each one that is not (saved by an older version, or by hand) what is
    wrong with it, naming it."""
    ws = store()
    held = st.session_state.setdefault(state.EXPERIMENTS, {})
    if ws is None:
        held[base.fingerprint] = ([], {}, [])
        return
    try:
        entries, bodies, unreadable = [], {}, []
        for e in ws.experiments(base.fingerprint)[-MAX_EXPERIMENTS:]:
            try:
                bodies[e.id] = experiments.readable(e.id, e.name, ws.experiment(e.id)[1])
            except InputError as problem:
                unreadable.append(str(problem))
                continue
            entries.append(e)
        held.clear()  # one dataset's at a time: a bound on the session's memory
        held[base.fingerprint] = (entries, bodies, unreadable)
    except InputError as e:
        st.session_state[state.EXPERIMENTS] = {base.fingerprint: ([], {}, [])}
        state.post([("error", str(e))], base.fingerprint)


def experiments_of(base: Dataset) -> tuple[list[ExperimentEntry], dict[int, dict], list[str]]:
    """The loaded dataset's saved experiments as the session last read them (on entering the page, after a save):
    the entries, their bodies by id, and one message for each stored one that is not a saved view (left out)."""
    if base.fingerprint not in st.session_state.get(state.EXPERIMENTS, {}):
        read_experiments(base)
    return st.session_state[state.EXPERIMENTS][base.fingerprint]


def save_experiment(base: Dataset, name: str, rec: dict) -> tuple[str, str]:
    """Save a record of the loaded dataset under a name, by this person; the message (kind, text)."""
    ws = store()
    if ws is None:
        return "warning", f"Not saved: the workspace cannot be opened ({problem()})."
    if signed_out():
        return "warning", f"Not saved: {signed_out_message()}"
    try:
        entry = ws.save_experiment(_dataset_id(ws, base), name, rec, person())
    except InputError as e:
        return "error", f"Not saved: {e}"
    read_experiments(base)
    return "success", f"Saved as experiment #{entry.id}, {entry.name}."


# ---------------------------------------------------------------------------------------------------- links


@st.cache_resource(show_spinner=False, max_entries=4)
def _stored_dataset(url: str, dataset_id: str, name: str) -> Dataset:
    """A stored dataset read from its files, once per server while it is among the last four opened (its name in
    the key: a renamed dataset is read again under its new name)."""
    return _opened(url).load_dataset(dataset_id)


def open_stored(dataset_id: str, run_names: list[str], vectors: str | None = None) -> list[str]:
    """Make a stored dataset, with those of its stored runs (and embeddings), the session's; what could not be
    opened (messages)."""
    ws = store()
    if ws is None:
        return [f"This link names a dataset of the workspace, which cannot be opened here ({problem()})."]
    entry = ws.dataset(dataset_id)
    invented = in_use.invented()
    if entry is None and dataset_id == invented.fingerprint:  # runs of the invented corpus, never kept here
        names = [*run_names, *([vectors] if vectors else [])]
        return [f"This link names runs or embeddings the workspace does not hold for invented: {', '.join(names)}."]
    if entry is None:
        return [
            f"This link names the dataset {dataset_id}, which this lab's workspace does not hold (it was deleted, "
            "or the link comes from another server)."
        ]
    try:
        ds = _stored_dataset(default_url(), entry.id, entry.name)
    except InputError as e:
        return [f"The dataset {entry.name} could not be read from the workspace: {e}"]
    st.session_state[state.DATASET] = None if ds.fingerprint == invented.fingerprint else ds
    st.session_state[state.STORED] = entry.id
    runs, missing = {}, []
    for name in run_names:
        try:
            runs[name] = ws.load_run(entry.id, name)
        except InputError:
            missing.append(name)
    st.session_state[state.RUNS] = runs
    st.session_state.pop(state.VECTORS, None)
    st.session_state[state.DENSE] = None
    read_grades(ds)
    problems = []
    if missing:
        problems.append(f"This link names runs the workspace does not hold for {entry.name}: {', '.join(missing)}.")
    if vectors:
        problem_ = _open_vectors(ws, ds, vectors)
        if problem_:
            problems.append(problem_)
    return problems


def follow_link() -> None:
    """On a session's first run: open what the URL names (a dataset of the store and its runs). Later runs write
    the URL from the session instead (`write_link`): Streamlit drops query parameters no widget holds when the
    page changes."""
    if st.session_state.get(state.LINK_FOLLOWED):
        return
    st.session_state[state.LINK_FOLLOWED] = True
    problems = follow_rule()
    want, runs, vectors = st.query_params.get(DATA), st.query_params.get_all(RUN), st.query_params.get(VECTORS)
    if want or runs or vectors:
        problems += open_stored(want or in_use.invented().fingerprint, runs, vectors)
        dims, limit = _int(st.query_params.get(state.DIMS)), in_use.max_dims(in_use.base_dataset())
        if dims is not None and dims > limit:  # the slider cannot hold it: the nearest it can, said below
            st.session_state[state.DIMS] = limit
            problems.append(
                f"The link's d = {dims} is more than {in_use.base_dataset().name} allows: d = {limit} here."
            )
    if problems:
        st.session_state[state.LINK_PROBLEM] = (want, runs, problems, _in_use(), vectors)


def follow_rule() -> list[str]:
    """Make the grades rule the link names (`?rule=mean`) the session's, before any page measures; a message for a
    rule there is none of (the default is kept)."""
    given = st.query_params.get(state.RULE)
    if given is None:
        return []
    if given in RULES:
        st.session_state[state.RULE] = given
        return []
    return [
        (
            f"The link's rule = {given[:40]} is none of the grades rules ({', '.join(RULES)}): "
            f"{in_use.DEFAULT_RULE} here."
        )
    ]


def write_rule() -> None:
    """Name the grades rule in force in the URL on every page (none for the default, the loaded judgements alone):
    Streamlit drops a query parameter no widget of the page holds, and the rule's widget is on the Judge page only."""
    rule = in_use.rule()
    want = None if rule == in_use.DEFAULT_RULE else rule
    if st.query_params.get(state.RULE) != want:
        if want is None:
            st.query_params.pop(state.RULE, None)
        else:
            st.query_params[state.RULE] = want


def _in_use() -> tuple[str | None, list[str], str | None]:
    """What the URL names for the session's dataset, runs and embeddings: the stored dataset's id (none for the
    invented corpus or a dataset the store does not hold), the runs' names and the stored embeddings in use (none
    unless the dataset is stored)."""
    ds = in_use.base_dataset()
    stored = st.session_state.get(state.STORED) == ds.fingerprint
    uploaded = st.session_state.get(state.DATASET) is not None
    held, dense = st.session_state.get(state.VECTORS), st.session_state.get(state.DENSE)
    vectors = (
        held[1]
        if stored
        and held is not None
        and held[0] == ds.fingerprint
        and dense is not None
        and dense.corpus_fingerprint == ds.corpus_fingerprint
        else None
    )
    return (
        (ds.fingerprint if stored and uploaded else None),
        (list(st.session_state.get(state.RUNS, {})) if stored else []),
        vectors,
    )


def _int(value) -> int | None:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None


def write_link() -> None:
    """Name the dataset and runs in use in the URL (nothing for the invented corpus without runs), so a copied
    link opens them; a link that could not be followed wholly is left as it was, until the dataset or runs in use
    change; and the grades rule in force (`write_rule`)."""
    write_rule()
    held = st.session_state.get(state.LINK_PROBLEM)
    want, runs, vectors = _in_use()
    if held is not None:
        if (want, runs, vectors) == held[3]:
            want, runs, vectors = held[0], held[1], held[4]  # still what the link opened: the link stays as given
        else:
            st.session_state.pop(state.LINK_PROBLEM)
    if st.query_params.get(DATA) != want:
        if want is None:
            st.query_params.pop(DATA, None)
        else:
            st.query_params[DATA] = want
    if st.query_params.get(VECTORS) != vectors:
        if vectors is None:
            st.query_params.pop(VECTORS, None)
        else:
            st.query_params[VECTORS] = vectors
    if st.query_params.get_all(RUN) != runs:
        if runs:
            st.query_params[RUN] = runs
        else:
            st.query_params.pop(RUN, None)


def link_problems() -> list[str]:
    """What the link this session opened on named that the workspace could not give (shown on every page)."""
    held = st.session_state.get(state.LINK_PROBLEM)
    return list(held[2]) if held else []


def say_link_problems() -> None:
    """Each of `link_problems`, at the top of the page, with what is shown instead."""
    ds = in_use.base_dataset()
    problems = link_problems()
    if problems:
        st.warning(
            " ".join(escape_markdown(p) for p in problems) + f" Showing **{escape_markdown(ds.name)}** "
            f"({ds.n_docs:,} documents, {ds.n_queries:,} questions); the link's other settings are kept.",
            icon=":material/link_off:",
        )


# ---------------------------------------------------------------------------------------- the Data page's list


def stored_datasets() -> list[DatasetEntry]:
    """The workspace's datasets, the latest first (none without a store)."""
    ws = store()
    return ws.datasets() if ws is not None else []


def _open(dataset_id: str) -> None:
    """Open a stored dataset from the Data page's list (a button's callback)."""
    problems = open_stored(dataset_id, [])
    entry = next((e for e in stored_datasets() if e.id == dataset_id), None)
    done = [] if problems or entry is None else [("success", f"Opened {entry.name} from the workspace.")]
    state.post([("error", p) for p in problems] + done, in_use.base_dataset().fingerprint)
    st.session_state[state.DIMS] = st.session_state[state.DIMS]  # the d slider's maximum follows the dataset


def _rename(dataset_id: str) -> None:
    """Rename a stored dataset (a button's callback): for everyone, and in this session if it is in use."""
    ws = store()
    new = str(st.session_state.get(f"ws_rename:{dataset_id}") or "")
    try:
        ws.rename_dataset(dataset_id, new, me())
    except InputError as e:
        state.post([("error", str(e))], in_use.base_dataset().fingerprint)
        return
    ds = st.session_state.get(state.DATASET)
    if ds is not None and ds.fingerprint == dataset_id:
        st.session_state[state.DATASET] = ds.renamed(new.strip())
    state.post([("success", f"Renamed to {new.strip()} in the workspace.")], in_use.base_dataset().fingerprint)


def _delete(dataset_id: str) -> None:
    """Move a stored dataset with its runs, embeddings, grades and experiments to the trash (a button's callback,
    once confirmed)."""
    ws = store()
    try:
        entry = ws.delete_dataset(dataset_id, me())
    except InputError as e:
        state.post([("error", str(e))], in_use.base_dataset().fingerprint)
        return
    in_use_here = st.session_state.get(state.STORED) == dataset_id
    if in_use_here:
        st.session_state.pop(state.STORED)
    until = entry.purged_at(trash_days())
    state.post(
        [
            (
                "info",
                f"Deleted {entry.name} from the workspace"
                + (": it stays in use in this session until you leave it." if in_use_here else ".")
                + f" It is in the trash with its runs, grades and experiments: {entry.deleted_by} deleted it; its "
                f"owner or an admin can restore it below until {when(until)} UTC.",
            )
        ],
        in_use.base_dataset().fingerprint,
    )


def _restore(dataset_id: str) -> None:
    """Bring a dataset back from the trash (a button's callback)."""
    try:
        entry = store().restore_dataset(dataset_id, me())
    except InputError as e:
        state.post([("error", str(e))], in_use.base_dataset().fingerprint)
        return
    state.post(
        [("success", f"Restored {entry.name} with its runs, grades and experiments: open it above.")],
        in_use.base_dataset().fingerprint,
    )


def _purge(dataset_id: str, name: str) -> None:
    """Delete a dataset of the trash for good (a button's callback, once confirmed)."""
    try:
        store().purge_dataset(dataset_id, me())
    except InputError as e:
        state.post([("error", str(e))], in_use.base_dataset().fingerprint)
        return
    state.post([("info", f"Deleted {name} for good.")], in_use.base_dataset().fingerprint)


def _import() -> None:
    """Read an exported workspace into the empty store (the uploader's callback)."""
    f = st.session_state.get("ws_import")
    ws = store()
    if f is None or ws is None:
        return
    base = in_use.base_dataset()
    if signed_out():
        state.post([("error", f"Not imported: {signed_out_message()}")], base.fingerprint)
        return
    try:
        n = transfer.import_workspace(ws, f.getvalue(), f.name)
    except InputError as e:  # one transaction: nothing of the zip was stored, the dataset in use stays
        state.post([("error", f"Not imported, the workspace left as it was: {e}")], base.fingerprint)
        return
    state.post([("success", f"Imported {plural(n, 'dataset')} from {f.name}: open one below.")], base.fingerprint)


def when(t: datetime) -> str:
    """A stored time as the pages show it: UTC, to the minute."""
    return t.astimezone(UTC).strftime("%Y-%m-%d %H:%M")


def _who_line(ws: Workspace) -> None:
    """Who this person is to the workspace: signed in (and an admin or not), signed out (read-only), or a name typed
    on a laptop without sign-in."""
    if signed_out():
        st.warning(escape_markdown(signed_out_message()), icon=":material/lock:")
        return
    user = proxy_user()
    if user:
        role = (
            "an admin: you may rename, delete and restore any dataset"
            if me().admin
            else ("you may rename, delete and restore the datasets you added, and take back your own grades")
        )
        st.caption(
            f"Signed in as **{escape_markdown(user)}** (from the proxy), {role}. Uploads and grades carry this name."
        )
    else:
        name_input(
            "Your name",
            ANONYMOUS,
            "Uploads and grades carry it (anonymous without one). Without sign-in "
            "(one person on this machine) you manage every dataset of this workspace.",
        )


def section() -> None:
    """The Data page's workspace: who you are, the stored datasets to open, rename or delete, and the trash."""
    st.subheader("Workspace")
    ws = store()
    if ws is None:
        st.warning(
            f"The workspace cannot be opened, so uploads are not kept: {escape_markdown(problem() or '')}",
            icon=":material/cloud_off:",
        )
        return
    try:
        ws.purge_expired()
    except InputError as e:
        st.error(escape_markdown(str(e)), icon=":material/error:")
    _who_line(ws)
    read_only = signed_out()
    entries = ws.datasets()
    used, limit = ws.size(), ws.max_bytes
    exporting, importing = st.columns(2)
    exporting.download_button(
        "Export the workspace (zip)",
        functools.partial(transfer.export_workspace, ws),
        file_name="retrieval-lab-workspace.zip",
        mime="application/zip",
        key="ws_export",
        on_click="ignore",
        icon=":material/archive:",
        width="stretch",
        disabled=not entries,
        help="Every dataset (as a BEIR folder and as uploaded), run, embeddings file, grade "
        "(qrels per rater and combined) and saved experiment, in one zip.",
    )
    if not entries and not read_only:
        importing.file_uploader(
            "Import a workspace (zip)",
            type=["zip"],
            key="ws_import",
            on_change=_import,
            help="A zip exported by this lab, read into this empty workspace.",
        )
    st.caption(
        f"Uploads are kept in {escape_markdown(ws.label)}: {plural(len(entries), 'dataset')}, {mb(used)} of "
        f"{mb(limit)}. Open one here, or share this page's link: it names the dataset and runs in use. Times "
        "are UTC."
    )
    if entries:
        _stored(entries, read_only)
    _trash(ws, read_only)


def _owner(e: DatasetEntry) -> str:
    return e.owner if e.owner is not None else "nobody (admins only)"


def _stored(entries: list[DatasetEntry], read_only: bool) -> None:
    """The stored datasets' table, and the one chosen's buttons (renaming and deleting only for who may)."""
    rows = [
        {
            "name": e.name,
            "documents": e.n_docs,
            "questions": e.n_questions,
            "judgements": e.n_judgements,
            "size": mb(e.size),
            "added": when(e.added_at),
            "by": e.added_by,
            "owner": _owner(e),
            "id": e.id,
        }
        for e in entries
    ]
    st.dataframe(rows, hide_index=True, width="stretch")
    ids = [e.id for e in entries]
    by_id = {e.id: e for e in entries}
    chosen = st.selectbox("Stored dataset", ids, format_func=lambda i: f"{by_id[i].name} ({i})", key="ws_chosen")
    if chosen is None:
        return
    allowed = not read_only and me().may_manage(by_id[chosen].owner)
    why = (
        None
        if allowed
        else (
            "Sign in to change it."
            if read_only
            else f"Only its owner ({_owner(by_id[chosen])}) or an admin may rename or delete it."
        )
    )
    a, b = st.columns([2, 5], vertical_alignment="bottom")
    a.button("Open", key="ws_open", on_click=_open, args=(chosen,), icon=":material/folder_open:", width="stretch")
    b.text_input("New name", value=by_id[chosen].name, key=f"ws_rename:{chosen}", max_chars=200, disabled=not allowed)
    b.button(
        "Rename",
        key="ws_rename_button",
        on_click=_rename,
        args=(chosen,),
        width="stretch",
        disabled=not allowed,
        help=why,
    )
    # the deletion on a row of its own: in a third of the row its check box's label was cut at 1024 px
    c, d = st.columns([5, 2], vertical_alignment="center")
    sure = c.checkbox(
        "Delete it for everyone",
        key=f"ws_sure:{chosen}",
        disabled=not allowed,
        help=why
        or f"With its runs, embeddings, grades and experiments, to the trash: restorable for "
        f"{trash_days():g} days, then deleted for good.",
    )
    d.button(
        "Delete",
        key="ws_delete",
        on_click=_delete,
        args=(chosen,),
        disabled=not (sure and allowed),
        type="primary",
        icon=":material/delete:",
        width="stretch",
    )


def _trash(ws: Workspace, read_only: bool) -> None:
    """The trash: who deleted what and when, until when it can be restored; restore or delete for good (its owner
    or an admin)."""
    gone = ws.trash()
    if not gone:
        return
    days = trash_days()
    st.markdown(
        f"**Trash** ({plural(len(gone), 'dataset')}): restorable for {days:g} days after deletion, with "
        "their runs, grades and experiments; then deleted for good."
    )
    st.dataframe(
        [
            {
                "name": e.name,
                "owner": _owner(e),
                "deleted by": e.deleted_by,
                "deleted": when(e.deleted_at),
                "deleted for good": when(e.purged_at(days)),
                "size": mb(e.size),
                "id": e.id,
            }
            for e in gone
        ],
        hide_index=True,
        width="stretch",
    )
    by_id = {e.id: e for e in gone}
    chosen = st.selectbox(
        "Deleted dataset",
        list(by_id),
        key="ws_trash_chosen",
        format_func=lambda i: f"{by_id[i].name} ({i}), deleted by {by_id[i].deleted_by}",
    )
    if chosen is None:
        return
    e = by_id[chosen]
    st.caption(
        f"**{escape_markdown(e.name)}**, owned by {escape_markdown(_owner(e))}: deleted by "
        f"**{escape_markdown(e.deleted_by or '')}** on {when(e.deleted_at)} UTC; restorable until "
        f"{when(e.purged_at(days))} UTC."
    )
    allowed = not read_only and me().may_manage(e.owner)
    why = (
        None
        if allowed
        else ("Sign in to change it." if read_only else f"Only its owner ({_owner(e)}) or an admin may restore it.")
    )
    a, b, c = st.columns([2, 2, 2], vertical_alignment="bottom")
    a.button(
        "Restore",
        key="ws_restore",
        on_click=_restore,
        args=(chosen,),
        disabled=not allowed,
        help=why,
        icon=":material/restore_from_trash:",
        width="stretch",
    )
    sure = b.checkbox("Delete it for good", key=f"ws_purge_sure:{chosen}", disabled=not allowed, help=why)
    c.button(
        "Delete for good",
        key="ws_purge",
        on_click=_purge,
        args=(chosen, by_id[chosen].name),
        disabled=not (sure and allowed),
        icon=":material/delete_forever:",
        width="stretch",
    )
