"""What the Data page shows and lets a person download: dataset statistics, unjudged results, CSV and TREC writers.

Pure functions over `Dataset`, `Ranking` and `Evaluation` (no Streamlit): the page only lays them out.
The JSON report is the one ``python -m retrieval evaluate --json`` prints, built by the same steps.
"""

from __future__ import annotations

import csv
import io
import math
import re
import shlex
from dataclasses import asdict, dataclass

import numpy as np

from ..core.params import ARTICLE_MEMBERS, Params
from ..core.words import escape_control, plural
from ..corpus.dataset import Dataset
from ..corpus.runs import TIES_DEFAULT, TrecRun
from ..retrievers.listed import Ranking
from .experiment import Evaluation, bootstrap_report, json_ready, to_json
from .metrics import meaning_warnings


@dataclass(frozen=True)
class Unjudged:
    """How much of a system's top k the judgements say nothing about."""

    system: str
    questions: int  # questions looked at (those with a relevant document)
    results: int  # results in their top k
    unjudged: int  # of which no judgement names the document

    @property
    def share(self) -> float:
        """unjudged / results (NaN when the system returned nothing)."""
        return self.unjudged / self.results if self.results else float("nan")


def unjudged_at_k(dataset: Dataset, ranking: Ranking, k: int, system: str | None = None) -> Unjudged:
    """Share of the top-k results with no judgement at all, over the questions that have a relevant document.

    A high share means the judgements were pooled from other systems: this one's metrics are a lower bound,
    since an unjudged document counts as not relevant.
    """
    qs = dataset.evaluated
    q_of, position, docs = ranking.top_entries(qs, k)
    total = int(docs.size)
    name = system or ranking.name
    if total == 0:
        return Unjudged(name, int(qs.size), 0, 0)
    n = max(dataset.n_docs, 1)
    qrels = dataset.qrels
    in_corpus = qrels.doc >= 0
    judged_keys = np.unique(qrels.query[in_corpus] * n + qrels.doc[in_corpus])
    known = docs >= 0
    judged = np.zeros(total, dtype=bool)
    judged[known] = np.isin(q_of[known] * n + docs[known], judged_keys)
    outside = np.flatnonzero(~known)
    if outside.size:  # a run's documents outside the corpus: match the judgements by id
        names = ranking.doc_names or ()
        by_id = {(int(q), d) for q, d in zip(qrels.query[~in_corpus], qrels.doc_id[~in_corpus])}
        for i in outside:
            q, rank = int(q_of[i]), int(position[i])
            did = names[q][rank] if q < len(names) and rank < len(names[q]) else None
            judged[i] = (q, did) in by_id
    return Unjudged(name, int(qs.size), total, int(total - judged.sum()))


def run_fits(run: TrecRun, dataset: Dataset) -> tuple[bool, str]:
    """Whether a run can be evaluated on `dataset`: some of its questions and documents are there.

    Returns (fits, why not) with a message naming what is missing.
    """
    known_q = [i for i, q in enumerate(run.query_ids) if q in dataset.query_index]
    if not known_q:
        ex = ", ".join(run.query_ids[:3])
        return False, f"none of its {plural(len(run.query_ids), 'question')} ({ex}, ...) is in {dataset.name}"
    if dataset.n_docs and not any(d in dataset.doc_index for i in known_q for d in run.doc_ids[i]):
        # judgements alone hold no corpus: a run's documents are matched to the judgements by id, as trec_eval does
        return False, f"none of its documents is in the corpus of {dataset.name}"
    return True, ""


# ------------------------------------------------------------------------------------------- writers


def _num(x: float) -> str:
    """A float for a text file, exact when read back (shortest round-trip form); NaN is empty."""
    x = float(x)
    return "" if math.isnan(x) else repr(x)


def metrics_csv(evaluation: Evaluation, metric_names: list[str] | tuple[str, ...] | None = None) -> str:
    """system x metric means as CSV: a header ``system,<metric>,...``, one row per system."""
    names = list(metric_names or [m.name for m in evaluation.metrics])
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["system", *names])
    for s in evaluation.systems:
        w.writerow([s, *(_num(evaluation.mean(s, m)) for m in names)])
    return out.getvalue()


def per_question_csv(evaluation: Evaluation, metric_names: list[str] | tuple[str, ...] | None = None) -> str:
    """One row per (system, question): ``system,qid,first_relevant_rank,<metric>,...``.

    Only the questions with a relevant document (the ones the means are over); an empty first_relevant_rank
    means no relevant document was retrieved.
    """
    ds = evaluation.dataset
    names = list(metric_names or [m.name for m in evaluation.metrics])
    qids = [ds.query_ids[q] for q in ds.evaluated]
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["system", "qid", "first_relevant_rank", *names])
    for s in evaluation.systems:
        first = evaluation.first_rank[s]
        cols = [evaluation.values[s][m] for m in names]
        for i, qid in enumerate(qids):
            fr = int(first[i])
            w.writerow([s, qid, fr if fr > 0 else "", *(_num(c[i]) for c in cols)])
    return out.getvalue()


def run_tag(name: str) -> str:
    """A system name as a TREC run tag (one token: whitespace becomes '_')."""
    return re.sub(r"\s+", "_", name.strip()) or "run"


def trec_run(ranking: Ranking, dataset: Dataset, tag: str | None = None) -> str:
    """A ranking as a TREC run file, ``qid Q0 docid rank score tag`` per line, ranks from 1.

    Lists are in the ranking's order (score descending, ties by document id ascending), so reading the file
    back with `dataset.parse_run` gives the same ranking; scores are written exactly (shortest round-trip form).
    """
    tag = run_tag(tag or ranking.name)
    lines = []
    for q, qid in enumerate(dataset.query_ids):
        ids = ranking.top_ids(dataset, q)
        _, scores = ranking.top(q)
        lines.extend(f"{qid} Q0 {d} {r} {float(s)!r} {tag}" for r, (d, s) in enumerate(zip(ids, scores), 1))
    return "\n".join(lines) + ("\n" if lines else "")


# ------------------------------------------------------------------------------------------- the JSON report


def report_metrics(k: int, chosen: str) -> list[str]:
    """The metrics of the app's report: hit, recall and nDCG at k, MRR, and the sidebar's metric."""
    return list(dict.fromkeys([f"hit@{k}", f"recall@{k}", "mrr", f"ndcg@{k}", chosen]))


def json_report(
    evaluation: Evaluation,
    params: Params,
    metric_names: list[str] | tuple[str, ...],
    bootstrap_metric: str,
    compare: tuple[str, str] | None = ("BM25", "LSA"),
    runs: tuple[TrecRun, ...] = (),
) -> dict:
    """The report ``python -m retrieval evaluate --json --metrics M --bootstrap B --compare A,B`` prints (its
    bootstrap null when `compare` is None: a single run on judgements alone).

    `evaluation` must hold every metric of `metric_names` and `bootstrap_metric`; the report lists only
    `metric_names` (the bootstrap metric is computed for the bootstrap alone, as the command line does). Its
    warnings are the dataset's and the systems', then `metrics.meaning_warnings` of these metrics.
    """
    names = list(metric_names)
    boot = bootstrap_report(evaluation, bootstrap_metric, *compare) if compare else None
    report = to_json(evaluation, params, boot)
    report["metrics"] = names
    ds = evaluation.dataset
    report["warnings"] += meaning_warnings(ds.qrels, ds.n_queries, [*names, bootstrap_metric])
    for row in report["systems"].values():
        for m in list(row):
            if m not in names:
                del row[m]
    for rows in report["per_query"].values():
        for row in rows.values():
            for m in list(row):
                if m not in names and m != "first_relevant_rank":
                    del row[m]
    return json_ready(tie_json(report, runs))


def ties_of(runs: tuple[TrecRun, ...]) -> str:
    """The tie rule the runs with ties were ranked by (the default when none has ties; several: joined by '+')."""
    rules = sorted({r.ties for r in runs if r.tied_questions})
    return "+".join(rules) if rules else TIES_DEFAULT


def tie_json(report: dict, runs: tuple[TrecRun, ...], rule: str | None = None) -> dict:
    """`params.ties` (the rule) and `params.tied_questions` (per run with ties, how many of its questions hold a tie)
    added to a JSON report when some run has ties; a report of runs without ties is left as it was."""
    tied = {r.name: r.tied_questions for r in runs if r.tied_questions}
    if tied:
        report["params"]["ties"] = rule or ties_of(runs)
        report["params"]["tied_questions"] = tied
    return report


def ties_line(runs: tuple[TrecRun, ...], rule: str | None = None) -> str | None:
    """The report header's sentence on ties, when some run has them: the rule used, and per run how many of its
    questions hold a tie."""
    tied = [(r.name, r.tied_questions, len(r.query_ids)) for r in runs if r.tied_questions]
    if not tied:
        return None
    rule = rule or ties_of(runs)
    how = {
        TIES_DEFAULT: "document id ascending (the article's rule; --ties trec_eval ranks them as trec_eval does)",
        "trec_eval": "document id descending (trec_eval's rule)",
    }.get(rule, f"each run's own rule ({rule})")
    each = "; ".join(f"{escape_control(n)}: {plural(k, 'question')} of {t:,}" for n, k, t in tied)
    return f"ties: tied scores ranked by {how}; questions with ties: {each}"


def _arg(x: float) -> str:
    """A number for the command line: short when that is exact (1.2, 60), else every digit."""
    short = f"{float(x):g}"
    return short if float(short) == float(x) else repr(float(x))


def cli_command(
    data: str,
    params: Params,
    metric_names: list[str] | tuple[str, ...],
    bootstrap_metric: str,
    runs: dict[str, str] | None = None,
    compare: tuple[str, str] = ("BM25", "LSA"),
    embeddings: str | None = None,
    ties: str = TIES_DEFAULT,
) -> str:
    """The command line that prints the same JSON report; `runs` maps a run's name to its file, `embeddings` is
    the --embeddings value of the dense system (e5-small, or the file(s) its vectors came from)."""
    p = asdict(params)
    parts = [
        "python",
        "-m",
        "retrieval",
        "evaluate",
        "--data",
        data,
        "--k1",
        _arg(p["k1"]),
        "--b",
        _arg(p["b"]),
        "--dims",
        str(p["dims"]),
        "--rrf-k",
        _arg(p["rrf_k"]),
        "--alpha",
        _arg(p["alpha"]),
        "--fusion-depth",
        str(p["fusion_depth"]),
        "--metrics",
        ",".join(metric_names),
        "--bootstrap",
        bootstrap_metric,
        "--compare",
        ",".join(compare),
    ]
    if tuple(params.members) != ARTICLE_MEMBERS:
        parts += ["--fuse", ",".join(params.members)]
    if params.weights is not None:
        parts += ["--weights", ",".join(_arg(w) for w in params.weights)]
    for name, path in (runs or {}).items():
        parts += ["--run", f"{name}={path}"]
    if embeddings:
        parts += ["--embeddings", embeddings]
    if ties != TIES_DEFAULT:
        parts += ["--ties", ties]
    parts.append("--json")
    return " ".join(shlex.quote(x) for x in parts)


def cli_qrels_command(
    qrels: str,
    metric_names: list[str] | tuple[str, ...],
    bootstrap_metric: str,
    runs: dict[str, str],
    compare: tuple[str, str] | None = None,
    ties: str = TIES_DEFAULT,
) -> str:
    """The command line that prints the same JSON report on judgements alone: `evaluate --qrels FILE --run
    NAME=PATH ...` (no corpus, no parameter of the built-in systems); `compare`, the bootstrap's pair."""
    parts = ["python", "-m", "retrieval", "evaluate", "--qrels", qrels]
    for name, path in runs.items():
        parts += ["--run", f"{name}={path}"]
    parts += ["--metrics", ",".join(metric_names), "--bootstrap", bootstrap_metric]
    if compare:
        parts += ["--compare", ",".join(compare)]
    if ties != TIES_DEFAULT:
        parts += ["--ties", ties]
    parts.append("--json")
    return " ".join(shlex.quote(x) for x in parts)
