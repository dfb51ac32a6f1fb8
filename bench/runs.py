"""Runs at engine scale: an engine's TREC run scored on judgements alone by the lab, pytrec_eval and ranx, each as a
whole process (parsing included), timed from outside (several runs alternated, e.g. ``/usr/bin/time -v``, the
median quoted). The numbers are in bench/RUNS.md.

    pip install -r bench/requirements.txt                      # the peers: pytrec-eval-terrier, ranx
    python bench/runs.py make bench/out/runs 7000 1000           # qrels and a run of 7,000 x 1,000 (7M lines)
    python bench/runs.py lab bench/out/runs                      # python -m retrieval evaluate --qrels --run --json
    python bench/runs.py pytrec bench/out/runs                   # pytrec_eval's parse and evaluate
    python bench/runs.py ranx bench/out/runs                     # ranx's Qrels/Run.from_file and evaluate
    python bench/runs.py check bench/out/runs                    # the three agree on every mean

Each prints the four means (nDCG@10, MAP@100, recall@1000, MRR), so a run that read nothing is seen. The run's
scores are distinct within each question (a tie is ranked differently by each tool: see `--ties`); its lines are
in rank order, as engines write them. `lab` runs the command line itself (`python -m retrieval`), so it pays for
what a user pays: the interpreter, the imports, the parse, the metrics and the 5,000-resample bootstrap's absence
(one run: no pair to compare).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
METRICS = ("ndcg@10", "map@100", "recall@1000", "mrr")
TREC_EVAL = {"ndcg@10": "ndcg_cut_10", "map@100": "map_cut_100", "recall@1000": "recall_1000", "mrr": "recip_rank"}
POOL = 1_000_000  # the documents the run's ids are drawn from


def make(out: Path, n_q: int, depth: int, seed: int = 0) -> None:
    """qrels.txt (about 10 judgements a question, half of them among its retrieved documents, grades 0..3) and
    run.trec (`depth` documents a question, distinct scores, in rank order)."""
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    with open(out / "run.trec", "w") as run, open(out / "qrels.txt", "w") as qrels:
        for q in range(n_q):
            docs = rng.choice(POOL, size=depth, replace=False)
            scores = (depth - np.arange(depth)) + rng.random(depth) * 0.5  # distinct, descending
            run.write("".join(f"q{q} Q0 d{d} {r + 1} {s:.6f} engine\n" for r, (d, s) in enumerate(zip(docs, scores))))
            judged = np.concatenate((rng.choice(docs, size=5, replace=False), rng.choice(POOL, size=5)))
            grades = rng.integers(0, 4, size=judged.size)
            grades[0] = max(grades[0], 1)  # every question has a relevant document
            seen = set()
            for d, g in zip(judged.tolist(), grades.tolist()):
                if d not in seen:
                    seen.add(d)
                    qrels.write(f"q{q} 0 d{d} {g}\n")
    print(f"{out}: {n_q:,} questions x {depth:,} = {n_q * depth:,} lines")


def lab(out: Path) -> dict[str, float]:
    """The lab's command line on judgements alone, its JSON means."""
    cmd = [sys.executable, "-m", "retrieval", "evaluate", "--qrels", str(out / "qrels.txt")]
    cmd += ["--run", f"engine={out / 'run.trec'}", "--metrics", ",".join(METRICS), "--json"]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)["systems"]["engine"]


def pytrec(out: Path) -> dict[str, float]:
    """pytrec_eval: its own parsers of the two files, then the evaluation; the means over the questions."""
    import pytrec_eval

    with open(out / "qrels.txt") as f:
        qrels = pytrec_eval.parse_qrel(f)
    with open(out / "run.trec") as f:
        run = pytrec_eval.parse_run(f)
    measures = {"ndcg_cut.10", "map_cut.100", "recall.1000", "recip_rank"}
    per_q = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    return {m: float(np.mean([v[t] for v in per_q.values()])) for m, t in TREC_EVAL.items()}


def ranx_means(out: Path) -> dict[str, float]:
    """ranx: Qrels and Run read from the files, then `evaluate`."""
    from ranx import Qrels, Run, evaluate

    qrels = Qrels.from_file(str(out / "qrels.txt"), kind="trec")
    run = Run.from_file(str(out / "run.trec"), kind="trec")
    got = evaluate(qrels, run, ["ndcg@10", "map@100", "recall@1000", "mrr"])
    return {m: float(got[m]) for m in METRICS}


def main(argv: list[str]) -> int:
    what, out = argv[0], Path(argv[1])
    if what == "make":
        make(out, int(argv[2]), int(argv[3]))
        return 0
    if what == "check":
        means = {"lab": lab(out), "pytrec_eval": pytrec(out), "ranx": ranx_means(out)}
        for tool, m in means.items():
            print(tool, {k: round(v, 12) for k, v in m.items()})
        worst = max(abs(means["lab"][k] - means[t][k]) for t in ("pytrec_eval", "ranx") for k in METRICS)
        print(f"largest difference from the lab: {worst:.2g}")
        return 0 if worst < 1e-9 else 1
    print({"lab": lab, "pytrec": pytrec, "ranx": ranx_means}[what](out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
