"""The retriever lab as a library: measure a retriever on its own (no Streamlit here).

The handful of names a library user needs; everything else is in the subpackages, one per layer (``core``,
``corpus``, ``kernels``, ``retrievers``, ``fusion``, ``evaluation``, ``engine``, ``analyses``: see
docs/architecture.md).

>>> import retrieval
>>> ds = retrieval.load("invented")                     # a built-in name, a BEIR folder or a BEIR .zip
>>> ev = retrieval.evaluate(ds, retrieval.Params(), ["ndcg@5", "mrr"])
>>> round(ev.mean("BM25", "ndcg@5"), 6), round(ev.mean("RRF", "ndcg@5"), 6)
(0.691171, 0.737367)
>>> [r["b"] for r in retrieval.compare(ev, "ndcg@5", [("RRF", "BM25")]) if not r["significant"]]
['BM25']
"""

import sys

# `python -m retrieval` imports this package before it runs `retrieval.__main__`, with sys.argv[0] set to "-m" while
# it does (the -m option's documented behaviour). The command line then loads only the modules its command uses
# (retrieval/cli/__init__.py's table): `gate`, `experiments`, `workspace` and `--help` never import the engine, numba
# or scikit-learn. Every other import of `retrieval` gets the whole public API below.
if getattr(sys, "argv", [""])[:1] != ["-m"]:
    from .core.errors import InputError
    from .core.params import Params
    from .corpus.dataset import Dataset, TrecRun, load, parse_run, read_run
    from .engine.engine import Engine, evaluate, for_dataset
    from .evaluation.experiment import Evaluation, compare
    from .evaluation.report import trec_run as write_run
    from .fusion import rrf
    from .retrievers.ranking import Ranking

__all__ = [
    "Dataset",
    "Engine",
    "Evaluation",
    "InputError",
    "Params",
    "Ranking",
    "TrecRun",
    "compare",
    "evaluate",
    "for_dataset",
    "load",
    "parse_run",
    "read_run",
    "rrf",
    "write_run",
]
