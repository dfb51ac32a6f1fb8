"""The dense retriever in the app: which vectors a session uses, the bundled model's encoding in the background
with its progress, asking before a long wait, and uploaded embeddings.

A session's dense source is an `embeddings.Aligned` for the dataset in use: the bundled model's vectors when
they are there without encoding (the invented corpus ships them; any corpus encoded once is in the disk cache),
or vectors the person encoded here or uploaded. Encoding runs in a background thread, one per corpus for the
whole server (a second session asking for the same corpus follows the same job: `JOBS`, a `Jobs`); the page polls it,
shows the time left at the live rate (the estimate made before starting until the first batch ends), and its
Cancel button stops it: the page at once, the thread after the batch in progress, nothing kept or cached.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field, replace

import streamlit as st

from retrieval.core.errors import InputError
from retrieval.corpus import embeddings
from retrieval.corpus.dataset import Dataset
from retrieval.corpus.embeddings import Aligned
from retrieval.engine.engine import BUNDLED
from retrieval.retrievers import dense

from . import in_use, live, state, workspace
from .format import agree, plural
from .markdown import escape_markdown as plain

ASK_ABOVE_S = 60.0  # an encoding estimated longer than this is started only once the person confirms
MAX_JOBS = 2  # encodings running at once on the server (each takes the machine's cores)
KEEP_FINISHED = (
    4  # finished jobs kept (with their vectors, or their error) for the sessions that follow them; older dropped
)
KEY_CONFIRM = "dense_confirm"
KEY_UPLOAD = "dense_upload"
KEY_ENCODE, KEY_USE = "dense_encode", "dense_use"
KEY_CANCEL = "dense_cancel"
KEY_FILES = "dense_files"
KEY_MESSAGE = (
    "dense_message"  # an error from a button's callback, shown once  # the names of the uploaded embeddings in use
)


@dataclass
class Job:
    """One corpus's encoding with the bundled model, in a background thread."""

    key: str
    total: int
    done: int = 0
    rate: float = 0.0
    left: float = math.nan
    started: float = field(default_factory=time.monotonic)
    elapsed: float = 0.0  # seconds from the start to the latest batch's end
    estimate: float = math.nan  # the offer's estimate of the whole encoding, made before it started
    cancelled: bool = False  # Cancel pressed: the job is over for the page at once (its thread stops between batches)
    result: Aligned | None = None
    error: str | None = None
    thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self.result is None and self.error is None and not self.cancelled

    @property
    def stopping(self) -> bool:
        """Cancelled, its thread still in the batch it was encoding (its cores still taken)."""
        return self.cancelled and self.thread is not None and self.thread.is_alive()

    def progress(self, done: int, total: int, rate: float, left: float) -> None:
        if not self.cancelled:  # the figures stay those of the moment Cancel was pressed
            self.done, self.total, self.rate, self.left = done, total, rate, left
            self.elapsed = time.monotonic() - self.started

    def cancel(self) -> None:
        """Stop the encoding: the page stops following it now, the thread at the end of its batch (dense.Cancelled);
        nothing of it is kept or cached. A job already over stays as it is."""
        if self.running:
            self.cancelled = True
            self.elapsed = time.monotonic() - self.started


def _encode(job: Job, ds: Dataset) -> None:
    try:
        result = embeddings.align(dense.embeddings_of(ds, job.progress, stop=lambda: job.cancelled), ds)
    except dense.Cancelled:
        return
    except Exception as e:  # noqa: BLE001 - reported on the page, never a traceback
        if not job.cancelled:
            job.error = f"{type(e).__name__}: {e}"
        return
    if not job.cancelled:
        job.result = result


class Jobs:
    """The server's encoding jobs, one per corpus (`dense.corpus_key`), shared by every session.

    Owner: this module holds the one instance, `JOBS`, for the whole process (a Streamlit server): sessions never
    own a job, they follow the one of their corpus (`job_of`), so two sessions asking for the same corpus share one
    encoding. Lifetime: a job lives while it runs (its thread, a daemon named `encode-` and the corpus key's first
    8 characters, ends with the encoding, or with the process), then stays as a finished job so the sessions
    waiting on it pick its vectors up (`_follow`); at most `keep` finished jobs are held, the earliest started
    dropped first when a new job starts (their vectors are in the disk cache by then: the next session reads them
    from there). A failed job stays, with its error, until the next start of its corpus replaces it. At most
    `max_running` run at once; a start beyond is refused with a message.
    Memory: a finished job holds its corpus's vectors (`embeddings.Aligned`: documents x 384 float32, 1.5 KB a
    document, 150 MB at 100,000), so at most (max_running + keep) corpora's vectors are held here.
    """

    def __init__(self, max_running: int = MAX_JOBS, keep: int = KEEP_FINISHED):
        self.max_running, self.keep = max_running, keep
        self._jobs: dict[str, Job] = {}  # corpus key -> its job, in the order started
        self._lock = threading.Lock()

    def start(self, ds: Dataset, estimate: float = math.nan) -> Job:
        """The encoding job of the dataset's corpus, started if none is running or done (a failed or cancelled one
        is started again; `estimate`: the offer's, in seconds); an InputError when `max_running` are running
        already (a cancelled one still ending its batch counts)."""
        key = dense.corpus_key(ds)
        with self._lock:
            job = self._jobs.get(key)
            if job is not None and job.error is None and not job.cancelled:
                return job
            if sum(j.running or j.stopping for j in self._jobs.values()) >= self.max_running:
                raise InputError(
                    f"{plural(self.max_running, 'encoding')} {agree(self.max_running, 'is', 'are')} running on "
                    "this server already; try again when one ends"
                )
            job = Job(key, ds.n_docs, estimate=estimate)
            job.thread = threading.Thread(target=_encode, args=(job, ds), name=f"encode-{key[:8]}", daemon=True)
            self._jobs.pop(key, None)  # a failed or cancelled job of the corpus: replaced, the new one the newest
            self._jobs[key] = job
            finished = [k for k, j in self._jobs.items() if not j.running]
            for k in finished[: max(0, len(finished) - self.keep)]:  # the earliest started first
                del self._jobs[k]
        job.thread.start()
        return job

    def get(self, ds: Dataset) -> Job | None:
        """The dataset's corpus's job, if one was started on this server and is still held."""
        with self._lock:
            return self._jobs.get(dense.corpus_key(ds))

    def __len__(self) -> int:
        with self._lock:
            return len(self._jobs)

    def clear(self) -> None:
        """Forget every job (a running one's thread goes on to its end, unobserved): for tests."""
        with self._lock:
            self._jobs.clear()


JOBS = Jobs()  # the server's jobs: one per corpus, shared by every session (see Jobs)


def start(ds: Dataset, estimate: float = math.nan) -> Job:
    """The encoding job of the dataset's corpus, started if it is not running (at most MAX_JOBS at once)."""
    return JOBS.start(ds, estimate)


def job_of(ds: Dataset) -> Job | None:
    """The dataset's encoding job, if one was started on this server."""
    return JOBS.get(ds)


def progress_text(job: Job) -> str:
    """'640 of 1,400 documents, 5.3 a second now, about 2 min 23 s left (6 min 10 s in all; 4 min 11 s estimated
    before starting)': the time left at the live rate (dense.encode_corpus) from the first batch on; before it,
    the estimate made before starting."""
    before = "" if math.isnan(job.estimate) else f"{duration(job.estimate)} estimated before starting"
    if math.isnan(job.left):
        return f"{job.done:,} of {job.total:,} documents" + (
            f"; {before}, measured again after the first batch" if before else ""
        )
    in_all = f" ({duration(job.elapsed + job.left)} in all{'; ' + before if before else ''})"
    return (
        f"{job.done:,} of {job.total:,} documents, {job.rate:.1f} a second now, about {duration(job.left)} left{in_all}"
    )


def cancelled_text(job: Job, ds: Dataset) -> str:
    """What a cancelled encoding left: where it stopped, nothing kept, the session as it was."""
    ending = (
        f" The encoder ends the batch it is in (at most {dense.BATCH} documents) and stops." if job.stopping else ""
    )
    return (
        f"Encoding cancelled after {job.done:,} of {job.total:,} documents ({duration(job.elapsed)}): nothing "
        f"of it is kept or cached, and the session goes on with what it had loaded, **{plain(ds.name)}** and "
        f"its systems, without dense.{ending}"
    )


def duration(seconds: float) -> str:
    """A wait for reading: '45 s', '2 min 23 s', '1 h 5 min'."""
    s = max(0, int(round(seconds)))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60} s"
    return f"{s // 3600} h {s % 3600 // 60} min"


def source(ds: Dataset) -> Aligned | None:
    """The session's dense source for the dataset in use: chosen here (encoded or uploaded), else the bundled
    model's when its vectors are there at once, else None. Vectors aligned with the same documents and
    questions under other judgements (the Judge page's) serve as they are, stamped with this dataset."""
    found = _found(ds)
    if found is None or found.dataset_fingerprint == ds.fingerprint:
        return found
    return replace(found, dataset_fingerprint=ds.fingerprint)


def _found(ds: Dataset) -> Aligned | None:
    chosen = st.session_state.get(state.DENSE)
    if chosen is not None and chosen.corpus_fingerprint == ds.corpus_fingerprint:
        return chosen
    job = job_of(ds)
    if job is not None and job.result is not None:
        return job.result
    stamp = _files_stamp(ds)
    if stamp is None:
        return None

    def bundled() -> Aligned | None:  # checked whole once per file state, never encoded here (that is a job's)
        return embeddings.align(dense.embeddings_of(ds), ds) if dense.documents_ready(ds) else None

    return in_use.engine(ds).memo.get(BUNDLED, ("bundled", dense.MODEL, stamp), bundled)


def _files_stamp(ds: Dataset) -> tuple | None:
    """The state (size, modification time) of the files the bundled model's vectors of the dataset would come
    from, or None when there is none: a cheap key, so a rerun does not re-read and checksum the vectors."""
    stamps = []
    for path in (dense.BUNDLED.get(ds.name), dense.cache_path(ds)):
        if path is not None and path.exists():
            st_ = path.stat()
            stamps.append((str(path), st_.st_size, st_.st_mtime_ns))
    return tuple(stamps) or None


def use(aligned: Aligned, files: tuple[str, ...] = ()) -> None:
    """Make vectors the session's dense source (`files`: the uploads they came from, for the command line)."""
    st.session_state[state.DENSE] = aligned
    st.session_state[KEY_FILES] = files


def cli_value(ds: Dataset) -> str | None:
    """The command line's --embeddings for the session's dense source: e5-small, or the uploaded file(s)."""
    current = source(ds)
    if current is None:
        return None
    if current.model == dense.MODEL:
        return "e5-small"
    return ",".join(st.session_state.get(KEY_FILES) or ("EMBEDDINGS.npz",))


def needs_confirmation(estimate_s: float) -> bool:
    """Whether an encoding this long is started only after the person says so."""
    return estimate_s > ASK_ABOVE_S


def estimate(ds: Dataset) -> float | None:
    """The bundled model's encoding time of the corpus (`dense.estimate_seconds`): the corpus's tokens, counted on a
    sample once per corpus (kept in its engine's memo), times the model's rate in force, which
    the warm-up thread may still lower (a rate timed while the cores were busy is replaced by one timed idle: the
    next run shows it). None while no rate was timed in this process: it is then timed in the background
    (`dense.calibrate_in_background`), not on the page's thread."""
    tokens = in_use.engine(ds).memo.get(BUNDLED, ("tokens", dense.MODEL), lambda: dense.corpus_tokens(ds))
    return None if tokens and not _timed() else dense.seconds_for(tokens)


def in_order(files: list) -> list:
    """Two files come in no order: the one whose name holds 'quer' or 'question' is the questions', put last."""
    return sorted(files, key=lambda f: ("quer" in f.name.lower() or "question" in f.name.lower(), f.name))


def load_upload(files: list) -> Aligned:
    """Uploaded embeddings (an .npz, or a documents and a questions file: .jsonl or .parquet) aligned with the
    dataset in use; an InputError names the file and what is wrong."""
    ds = in_use.current_dataset()
    ordered = in_order(files)
    try:
        embeddings.loader_for([f.name for f in ordered])
    except InputError as e:
        raise InputError(f"{e} (the one whose name holds 'quer' or 'question' is the questions')") from None
    return embeddings.align(
        embeddings.load_files([(f.name, f.getvalue()) for f in ordered], embeddings.Limits.of(ds)), ds
    )


@st.fragment(run_every=1.0)
def _follow(ds: Dataset) -> None:
    """The running encoding's progress, redrawn every second; the whole app reruns when it ends."""
    job = job_of(ds)
    if job is None:
        return
    if job.running:
        st.progress(job.done / max(job.total, 1), text=f"Encoding with the bundled model: {progress_text(job)}")
        st.button("Cancel", icon=":material/cancel:", key=KEY_CANCEL, on_click=job.cancel)
        return
    if job.result is not None:
        use(job.result)
    st.rerun()


def section(ds: Dataset) -> None:
    """The Data page's dense section: what the session uses, encoding (asked first when long), uploads."""
    st.subheader("Dense retrieval")
    current = source(ds)
    job = job_of(ds)
    if current is not None:
        st.info(
            f"The system **dense** ranks by cosine with {plain(current.model)} vectors "
            f"({ds.n_docs:,} documents × {current.doc_vectors.shape[1]} dimensions). Add it to the fusions in "
            "the sidebar to measure a hybrid.",
            icon=":material/check_circle:",
        )
        for w in current.warnings:
            st.warning(plain(w), icon=":material/warning:")
    elif job is not None and job.running:
        _follow(ds)
    else:
        if job is not None and job.error:
            st.error(plain(f"The encoding failed: {job.error}"), icon=":material/error:")
        if job is not None and job.cancelled:
            st.info(cancelled_text(job, ds), icon=":material/cancel:")
        _offer(ds)
    files = st.file_uploader(
        "Or bring your own embeddings: an .npz (doc_ids, doc_vectors, query_ids, query_vectors), "
        "or a documents and a questions file (.jsonl or .parquet, each with id and vector)",
        type=["npz", "jsonl", "parquet"],
        accept_multiple_files=True,
        key=KEY_UPLOAD,
    )
    if files:
        st.button("Use these embeddings", icon=":material/upload:", key=KEY_USE, on_click=_on_use)
    message = st.session_state.pop(KEY_MESSAGE, None)
    if message:
        st.error(plain(message), icon=":material/error:")


def _offer(ds: Dataset) -> None:
    """The bundled model's offer: how long it would take here, the question when that is long, the button. While
    the model's rate is timed in the background (`estimate` None), a line says so and the page comes back with
    the offer once it is in (`live.rerun_when`)."""
    seconds = estimate(ds)
    if seconds is None:
        st.caption(
            "Timing the bundled model (multilingual-e5-small) on this machine, once the cores are free: the "
            "time it would take to encode this corpus, and the button to start, follow here."
        )
        live.rerun_when(_timed)
        return
    st.write(
        f"The bundled model (multilingual-e5-small, 4-bit, on this machine's CPU) would encode the "
        f"{ds.n_docs:,} documents in about **{duration(seconds)}** (its time per token on this machine, "
        "times the tokens counted on a sample; other work on the machine slows it, and once it runs the "
        "time left is measured again after each batch). The vectors are then cached on disk, so this "
        "happens once per corpus."
    )
    ok = True
    if needs_confirmation(seconds):
        st.info(
            "That is a long wait. Two other ways: upload embeddings you computed elsewhere (below), or run "
            f"`python -m retrieval evaluate --data PATH --embeddings e5-small` once on the command line "
            f"(same cache: {plain(str(dense.cache_dir()))}).",
            icon=":material/schedule:",
        )
        ok = st.checkbox(f"Yes, encode for about {duration(seconds)}", key=KEY_CONFIRM)
    st.button(
        "Encode with the bundled model",
        disabled=not ok,
        icon=":material/memory:",
        key=KEY_ENCODE,
        on_click=_on_encode,
        args=(ds,),
    )


def _timed() -> bool:
    """Whether the background timing of the model is over: a rate in force, or the thread ended without one."""
    return dense.rate_in_force() is not None or not dense.calibrate_in_background().is_alive()


def _on_encode(ds: Dataset) -> None:
    """The encode button's callback (callbacks run before the page, so the job starts whatever reruns follow)."""
    seconds = estimate(ds)
    try:
        start(ds, math.nan if seconds is None else seconds)
    except InputError as e:
        st.session_state[KEY_MESSAGE] = str(e)


def _on_use() -> None:
    """The embeddings button's callback: the uploaded files, checked and aligned, become the dense source; a bad
    file leaves the session as it was and says why."""
    files = st.session_state.get(KEY_UPLOAD) or []
    try:
        aligned = load_upload(files)
    except InputError as e:
        st.session_state[KEY_MESSAGE] = str(e)
    else:
        use(aligned, tuple(f.name for f in files))
        not_kept = workspace.keep_embeddings([(f.name, f.getvalue()) for f in in_order(files)])
        if not_kept:
            st.session_state[KEY_MESSAGE] = not_kept
