"""What an engine's memo holds: its kinds, each bounded (`CACHE_SIZES`, with what one value costs), and the kinds an
engine derived for other judgements shares with the engine of the same texts (`CORPUS_KINDS`). The engine's own
kinds (runs, fits, fusions...) and those of what the analyses compute from its dataset and parameters for the app's
pages: one cache per dataset, whoever asks (docs/architecture.md, "One way to cache").
"""

from __future__ import annotations

# The kinds of what the analyses compute from an engine's dataset and parameters (for the app's pages), kept in the
# engine's memo like its own: one cache per dataset, whoever asks (docs/architecture.md, "One way to cache").
TUNING = "tuning"  # analyses.tuning: landscapes, the fused members' fixed parts, a question's fusion explained
VERDICTS = "tuning verdicts"  # analyses.tuning: the sidebar's setting tested against the best
BUNDLED = "dense"  # retrievers.dense: the bundled model's vectors of the corpus, its token count (the texts' alone)
DIAGNOSIS = "diagnosis"  # analyses.diagnosis: a system's failing questions
CHANGES = "changes"  # analyses.diagnosis: what one system fixes and breaks relative to another
STEMMER = "stemmer effect"  # analyses.stemming: what a stemmer changes

CACHE_SIZES = {  # values kept per kind in one engine; what one value costs is said beside it
    "run": 12,  # a retriever's run (questions x up to 1,000 scores: ~16 MB at 1,000 questions)
    "fit": 4,  # an LSA fit (documents x d float64, twice)
    "block": 3,  # a large corpus's SVD at a block's dimensions, which every smaller d truncates (documents x D float64)
    "block questions": 3,  # ... and the questions projected into it (questions x D float64)
    "probe": 4,  # a member's lists' sites in BM25's question layout (questions x 1,000: int64, int32, int32)
    "plan": 4,  # BM25's plan counting repeated question words (the questions' postings again) and its idf weighed per rule
    "run file": 16,  # the system of an uploaded TREC run (its lists as read)
    "vectors": 2,  # the dense system of uploaded or encoded vectors (float64 copies: 6 KB a document at 384-d)
    "lists": 8,  # the weighted fusion's look-ups: each member's scores of the others' lists (questions x 1,000 float64 each)
    "weighted": 16,
    "rrf": 16,
    "interval": 256,  # a row's bootstrap interval (two floats): every system x metric of a few pages and steps
    "adhoc rows": 8,  # a typed question's scores of every document by each system (3 x 8 bytes a document: 2.4 MB at 100k)
    "adhoc": 8,  # ... read at the full parameters (the same rows: no copy)
    "adhoc ranks": 16,  # ... and its rankings under given judgements (each system's top lists: a few KB)
    # what the analyses compute from the engine's dataset and parameters, for the app's pages (kinds named below):
    TUNING: 24,  # a landscape (tuning.Landscape: settings x questions float64, e.g. 176 x 1,000 = 1.4 MB, with its
    # tie intervals and p-values: 2 x settings more), the fused members' fixed parts (tuning.Fixed: each member's
    # run and ranking, the engine's own objects, and their look-ups of each other's lists: members^2 x questions x 1,000
    # float64, 32 MB for two members at 1,000 questions; a member's scores of every document only a question at a time)
    # and one question's fusion explained (a few hundred rows of a few numbers)
    VERDICTS: 32,  # the sidebar's setting against the best (tuning.Versus: two p-values, a family size and its
    # sentence; and whether it is tied with the best): well under 1 KB each
    BUNDLED: 4,  # the bundled model's vectors of the dataset, checked once per state of their files
    # (embeddings.Aligned: documents x 384 float32 and questions x 384, 1.5 KB a document: 150 MB at 100,000), or None
    # when there are none; and the corpus's token count for the encoding estimate (an int)
    DIAGNOSIS: 32,  # a system's failing questions at a cutoff (diagnosis.Case: a few hundred bytes a failing question)
    CHANGES: 8,  # what one system fixes and breaks relative to another (diagnosis.Change: as many, as small)
    STEMMER: 8,  # what a stemmer changes in BM25's failures and mean (stemming.StemmerEffect: as small)
}
# The kinds whose values depend on the documents and questions only, never on the judgements: an engine derived
# for other judgements (`Engine.derived`) shares them with the engine it came from (a probe locates a registered
# retriever's lists, which the texts alone decide, in BM25's layout). A run's judged ranks, the fusions and the
# landscapes do depend on the judgements: each engine keeps its own.
CORPUS_KINDS = (
    "fit",
    "block",
    "block questions",
    "probe",
    "plan",
    "vectors",
    "run file",
    "adhoc rows",
    "adhoc",
    BUNDLED,
)
