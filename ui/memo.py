"""The app's own caches: what only the pages compute and reuse, kept beside each engine, never in it.

The engine's cache (`retrieval.engine.engine.CACHE_SIZES`) holds what the library computes for everyone; what
the pages alone ask for (the Tuning page's landscapes and verdicts, the bundled model's vectors and estimate on
the Data page) is kept here, in one `retrieval.core.memo.Memo` per engine (bounded per kind, thread-safe, keyed
by values), made on first use by `for_engine`.

Owner and lifetime: the memo of an engine is held in a `weakref.WeakKeyDictionary` keyed by the Engine object, so
it lives exactly as long as its engine: when `retrieval.engine.engine.for_dataset` drops an engine (at most
ENGINES, and DERIVED derived ones, are kept) and no session holds it any more, its memo goes with it. Nothing
stored here refers back to the engine (or it would never be dropped: tests/test_ui_memo.py checks it).

The kinds in `CORPUS_KINDS` depend on the documents and questions only, never on the judgements: an engine
derived for other judgements (`Engine.derived`, the Judge page's grades) shares them with the root engine of the
same texts (the first one built, which every derived engine holds), as the engine shares its own corpus kinds:
for a derived engine `for_engine` gives an `engine.SharedMemo` whose corpus kinds go to the root's memo. Every
other kind is the engine's own.

At most, one engine's memo holds the sum over `SIZES` of each kind's bound times what one value costs (said
beside each kind); `retrieval.engine.engine.ENGINES + DERIVED` engines are alive at most, with their memos.
"""

from __future__ import annotations

import threading
import weakref

from retrieval.core.memo import Memo
from retrieval.engine.engine import Engine, SharedMemo

TUNING = "tuning"
VERDICTS = "tuning verdicts"
DENSE = "dense"

SIZES = {  # values kept per kind in one engine's memo; what one value holds and costs is said beside it
    TUNING: 24,  # ui/tuning.py, per judgements: a landscape (Landscape: settings x questions float64, e.g. 176 x 1,000
    # = 1.4 MB, with its tie intervals and p-values: 2 x settings more), the fused members' fixed parts
    # (tuning.Fixed: each member's scores of every document, questions x documents float64, 800 MB a member at
    # 100,000 x 1,000, with its ranking) and one question's fusion explained (a few hundred rows of a few numbers)
    VERDICTS: 32,  # ui/tuning.py, per judgements: the sidebar's setting against the best (tuning.Versus: two p-values,
    # a family size and its sentence; and whether it is tied with the best): well under 1 KB each
    DENSE: 4,  # ui/dense.py, per texts (CORPUS_KINDS): the bundled model's vectors of the dataset, checked once per
    # state of their files (embeddings.Aligned: documents x 384 float32 and questions x 384, 1.5 KB a document: 150 MB
    # at 100,000), or None when there are none; and the corpus's token count for the encoding estimate (an int)
}
CORPUS_KINDS = (DENSE,)  # the kinds shared by the engines of the same texts: kept in the root engine's memo

_MEMOS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Engine -> its memo, dropped with the engine
_LOCK = threading.Lock()


def for_engine(engine: Engine) -> Memo | SharedMemo:
    """The app's memo of `engine` (`SIZES`), made on first use and dropped with the engine; for a derived engine
    its `CORPUS_KINDS` are the root engine's (the same interface as Memo)."""
    root = engine.root
    with _LOCK:
        memo = _MEMOS.get(engine)
        if memo is None:
            if root is engine:
                memo = Memo(SIZES)
            else:
                corpus = _MEMOS.get(root)
                if corpus is None:
                    corpus = _MEMOS[root] = Memo(SIZES)
                memo = SharedMemo(Memo(SIZES), corpus, CORPUS_KINDS)
            _MEMOS[engine] = memo
        return memo
