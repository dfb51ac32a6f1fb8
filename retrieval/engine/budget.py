"""One memory budget per server: what a dataset's engine will cost, estimated before it is built; and the most text
a corpus may hold to be indexed at all (`check_size`, `max_chars`).

The server (the app's process; the command line is a process of its own) keeps engines within one budget,
$RETRIEVAL_LAB_MEMORY_BUDGET (bytes, or with K, M, G: "4G"), 4 GiB by default: this 24 GiB machine has room for
it many times over, beside the browser sessions' own copies of what they uploaded. `registry.for_dataset` asks
`Cost.of(dataset)` before it indexes anything: a dataset whose engine would not fit even with every other engine
dropped is refused with a message naming the budget and its setting; one that fits once others are dropped drops
the least recently used engines first (`registry.admit`). Engines not used for $RETRIEVAL_LAB_IDLE_SECONDS (600 by
default) are dropped too, and the freed heap is handed back to the system, so memory returns when work ends.

The cost model is linear in what a dataset holds, fitted by `bench/memory.py` (each shape measured in a fresh
process: the dataset made, its engine built and every system evaluated at the article's parameters) and rounded
up: a document's ids, text and lengths; a token's share of the text, the count matrix and the postings; a
judgement's rows; a question's runs, fusions and cached lists (up to 1,000 deep); and the process's base. Tokens
are counted without tokenising (the spaces of the text, plus one per document: words joined by punctuation count
as one, so the estimate errs low there, by the token coefficient times those words).
"""

from __future__ import annotations

import os
from typing import NamedTuple

from ..core.environment import bytes_from_env
from ..core.errors import InputError
from ..corpus.dataset import Dataset

BUDGET_ENV = "RETRIEVAL_LAB_MEMORY_BUDGET"
DEFAULT_BUDGET = 4 * 2**30
IDLE_ENV = "RETRIEVAL_LAB_IDLE_SECONDS"
DEFAULT_IDLE = 600.0


class Cost(NamedTuple):
    """Bytes per unit of what a dataset holds (bench/memory.py's fit, rounded up)."""

    per_document: float
    per_token: float
    per_judgement: float
    per_question: float
    base: float

    def of(self, dataset: Dataset) -> int:
        """The most bytes the dataset and its engine take: the peak while the engine is built and every system
        evaluated, with a quarter more for safety (what it holds after is lower: bench/memory.py)."""
        return int(
            self.per_document * dataset.n_docs
            + self.per_token * tokens(dataset)
            + self.per_judgement * len(dataset.qrels)
            + self.per_question * dataset.n_queries
            + self.base
        )


# bench/memory.py's fit of the peak (377 B a document, 57.5 a token, 390 a judgement; a question's 73 KB from the
# fit of what stays held) with a quarter more, rounded up; bench/RESULTS.md has the run. Over its seven shapes the
# fit was off by -22% to +100% (the model with the quarter added errs low on none of them).
COST = Cost(per_document=480.0, per_token=72.0, per_judgement=490.0, per_question=92_000.0, base=16 * 2**20)


def tokens(dataset: Dataset) -> int:
    """The documents' and questions' words, counted without tokenising: spaces plus one per text (C-speed)."""
    texts = (*dataset.doc_texts, *dataset.query_texts)
    return sum(t.count(" ") for t in texts) + len(texts)


def budget() -> int:
    """The server's memory budget in bytes: $RETRIEVAL_LAB_MEMORY_BUDGET, else DEFAULT_BUDGET."""
    return bytes_from_env(BUDGET_ENV, DEFAULT_BUDGET)


def idle_seconds() -> float:
    """How long an engine no session uses is kept: $RETRIEVAL_LAB_IDLE_SECONDS, else DEFAULT_IDLE."""
    value = os.environ.get(IDLE_ENV, "").strip()
    if not value:
        return DEFAULT_IDLE
    try:
        seconds = float(value)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise InputError(f"{IDLE_ENV}={value!r}: expected a number of seconds > 0, e.g. 600")
    return seconds


def gib(n: float) -> str:
    """Bytes as GiB for a message: '4.0 GiB'."""
    return f"{n / 2**30:.1f} GiB"


def refuse_above(dataset: Dataset, cost: int, limit: int) -> None:
    """Refuse a dataset whose engine alone would take more than the budget, saying what it holds and the setting."""
    if cost > limit:
        raise InputError(
            f"{dataset.name}: {dataset.n_docs:,} documents, about {tokens(dataset):,} words and {len(dataset.qrels):,} "
            f"judgements would take about {gib(cost)} of memory to index and evaluate; the server's memory budget is "
            f"{gib(limit)} ({BUDGET_ENV}, see the README's Limits)"
        )


# The text a corpus may hold to be indexed: a server refuses a corpus above APP_MAX_CHARS before indexing it, the
# command line, which serves one person, above CLI_MAX_CHARS; $RETRIEVAL_LAB_MAX_CHARS sets both. What an engine
# costs is priced by budget.COST (documents, words, judgements, questions), and a server's engines share one
# memory budget (this module, `registry.admit`).
APP_MAX_CHARS = 40_000_000
CLI_MAX_CHARS = 400_000_000
MAX_CHARS_ENV = "RETRIEVAL_LAB_MAX_CHARS"


def max_chars(default: int = APP_MAX_CHARS) -> int:
    """`default`, or $RETRIEVAL_LAB_MAX_CHARS when it is set (an error names it when it is no whole number >= 1)."""

    value = os.environ.get(MAX_CHARS_ENV, "").strip().replace("_", "")
    if not value:
        return default
    if not value.isdigit() or int(value) < 1:
        raise InputError(f"{MAX_CHARS_ENV}={value!r}: expected a whole number of characters >= 1, e.g. 100000000")
    return int(value)


def check_size(dataset: Dataset, limit: int) -> None:
    """Refuse, before any indexing, a dataset whose texts exceed `limit` characters, saying what indexing would
    cost and how to raise the limit."""
    chars = sum(map(len, dataset.doc_texts)) + sum(map(len, dataset.query_texts))
    if chars > limit:
        raise InputError(
            f"{dataset.name}: {chars:,} characters of text; indexing them would take about "
            f"{gib(COST.of(dataset))} of memory; the limit here is {limit:,} characters (set "
            f"{MAX_CHARS_ENV} to raise it)"
        )
