"""What a dataset costs the server's memory: the measurements behind `retrieval.engine.budget`'s cost model.

Each shape is measured in a fresh child process: the compiled kernels loaded and a small engine built first (so
code and first-use costs are not counted), then the dataset made from arrays (its texts, ids and judgements: what a
session holds after an upload), then its engine built and every system evaluated at the article's parameters on
the default metrics (what the server holds while the dataset is in use). Resident memory (VmRSS) is read after a
garbage collection and `malloc_trim` at each stage, the peak (VmHWM, reset before the stage) during it.

    .venv/bin/python bench/memory.py            # every shape, then the least-squares fit of bytes per unit

The fit: engine + dataset bytes = a x documents + b x tokens + c x judgements + d x questions + e, nonnegative
least squares over the shapes; the peak is fitted the same way. `budget.COST` holds the rounded-up coefficients.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

SHAPES = {  # name: (documents, words per document, questions, judgements)
    "one word, 1M docs": (1_000_000, 1, 100, 300),
    "one word, 300k docs": (300_000, 1, 100, 300),
    "200 words, 20k docs": (20_000, 200, 100, 300),
    "20 words, 100k docs": (100_000, 20, 1000, 5_000),
    "1M judgements": (20_000, 20, 1000, 1_000_000),
    "3M judgements": (20_000, 20, 1000, 3_000_000),
    "50 words, 200k docs": (200_000, 50, 1000, 10_000),
}
VOCABULARY = 200_000  # distinct words the shapes draw from (Zipf-like: a few common, many rare)


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def _settle() -> int:
    from retrieval.engine.engine import release_free_memory

    gc.collect()
    release_free_memory()
    return _status("VmRSS")


def _reset_peak() -> None:
    Path("/proc/self/clear_refs").write_text("5")


def make(n_docs: int, words: int, n_q: int, n_judged: int, seed: int = 0):
    """A dataset of the shape: documents of `words` words each from a Zipf-like vocabulary, questions of 4 words,
    `n_judged` judgements spread over the questions."""
    from retrieval.corpus.dataset import Dataset, Qrels

    rng = np.random.default_rng(seed)
    vocab = np.array([f"w{i}x" for i in range(VOCABULARY)], dtype=object)
    ranks = np.minimum((rng.pareto(1.1, size=n_docs * words) * 20).astype(np.int64), VOCABULARY - 1)
    tokens = vocab[ranks].reshape(n_docs, words)
    texts = tuple(" ".join(row) for row in tokens.tolist())
    del tokens, ranks
    qtexts = tuple(" ".join(vocab[rng.integers(0, 2000, 4)].tolist()) for _ in range(n_q))
    q = rng.integers(0, n_q, n_judged)
    d = rng.integers(0, n_docs, n_judged)
    doc_ids = tuple(f"doc{i}" for i in range(n_docs))
    qrels = Qrels(query=q, doc=d, doc_id=np.array(doc_ids, dtype=object)[d], grade=rng.integers(1, 3, n_judged))
    return Dataset("shape", doc_ids, texts, tuple(f"q{i}" for i in range(n_q)), qtexts, qrels)


def child(name: str) -> dict:
    from retrieval.core.params import Params
    from retrieval.corpus import dataset as datasets
    from retrieval.engine.engine import Engine, warm_up

    warm_up()
    Engine(datasets.load("invented")).evaluate(Params())
    base = _settle()
    _reset_peak()
    ds = make(*SHAPES[name])
    after_data = _settle()
    data_peak = _status("VmHWM")
    _reset_peak()
    e = Engine(ds)
    e.evaluate(Params())
    held = _settle()
    peak = _status("VmHWM")
    tokens = sum(len(t.split()) for t in ds.doc_texts)
    return {
        "shape": name,
        "docs": ds.n_docs,
        "tokens": tokens,
        "judgements": len(ds.qrels),
        "questions": ds.n_queries,
        "dataset_bytes": after_data - base,
        "dataset_peak": data_peak - base,
        "held_bytes": held - base,
        "peak_bytes": peak - base,
    }


def fit(rows: list[dict], target: str) -> np.ndarray:
    """Nonnegative least squares of `target` on documents, tokens, judgements, questions and a constant."""
    from scipy.optimize import nnls

    x = np.array([[r["docs"], r["tokens"], r["judgements"], r["questions"], 1.0] for r in rows], dtype=np.float64)
    y = np.array([r[target] for r in rows], dtype=np.float64)
    scale = x.max(axis=0)
    coef, _ = nnls(x / scale, y)
    return coef / scale


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2])))
        return 0
    rows = []
    for name in SHAPES:
        out = subprocess.run([sys.executable, __file__, "--child", name], capture_output=True, text=True, check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        r = rows[-1]
        print(
            f"| {name} | {r['docs']:,} | {r['tokens']:,} | {r['judgements']:,} | {r['dataset_bytes'] / 2**20:,.0f} MiB "
            f"| {r['held_bytes'] / 2**20:,.0f} MiB | {r['peak_bytes'] / 2**20:,.0f} MiB |",
            flush=True,
        )
    for target in ("held_bytes", "peak_bytes"):
        c = fit(rows, target)
        print(
            f"{target}: {c[0]:.0f} B/document, {c[1]:.1f} B/token, {c[2]:.0f} B/judgement, {c[3]:.0f} B/question, "
            f"{c[4] / 2**20:.0f} MiB"
        )
        for r in rows:
            model = c @ np.array([r["docs"], r["tokens"], r["judgements"], r["questions"], 1.0])
            print(f"   {r['shape']}: measured {r[target] / 2**20:,.0f} MiB, model {model / 2**20:,.0f} MiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
