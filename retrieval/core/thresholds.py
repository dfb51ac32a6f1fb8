"""The speed thresholds: every constant that chooses among the compiled passes' paths, or sizes one, in one table.

None of them changes a result (every path gives the same bits: tests/kernels/test_kernels.py runs each against the
brute-force reference); they change only how fast the result comes. Each names the benchmark that justifies it:
`bench/speed.py --paths` (bench/paths.py: each path beside the plainest, at Cranfield, 100k and 1M documents;
its latest output is in bench/RESULTS.md) or another file of bench/. The compiled kernels read them as
constants, frozen when compiled: each kernel file's SOURCE_DIGEST covers this file (retrieval/kernels/__init__.py).
"""

# ---- which path (bm25.run's and lsa.run's path "auto")

GROUPED_SHARE = 16  # BM25: the grouped pass takes a question touching at least 16 x m documents, the hinted full
# pass the others. --paths, 'BM25' (docs/performance.md): on Cranfield (7.8 m a question) hinted 2.4 ms against
# grouped 5.0 ms; at 100k grouped 27.5 ms against hinted 45.5 ms. Open: at 1M grouped for every question was faster
# than this rule (351 against 415 ms)
# LSA and dense: "auto" streams wherever a row is long enough to be sampled (STREAM_* below); the grouped rows it
# once chose above 16 dimensions were deleted, at best 1.2x the stream (--paths, 'LSA d=48', Cranfield)

# ---- how a path runs

GUESS = 8  # BM25 grouped: the first cut is the lowest new score among the hint's last GUESS documents; a second
# try at the lowest of all m where fewer than m reach it (part of --paths 'BM25 grouped')
SORT_BUDGET = 16  # BM25 hinted: moves per candidate an insertion sort of the hint's nearly ordered list may take
# before the general sort takes over (part of --paths 'BM25 hinted')
STREAM_BLOCK = 1024  # LSA stream: documents whose cosines a streamed question holds at once (8 KB)
STREAM_GROUP = 16  # LSA stream: questions streamed together, each block of the document vectors read once for them
STREAM_ROOM = 4  # LSA stream: candidates a streamed question may hold, in units of those expected to reach its
# sample's cut (more: the question is given back to the row path)
SAMPLE_SHARE = 4  # a dense row of n entries keeping m is sampled at one entry in min(64, n // (4 m)), ...
SAMPLE_RUN = 8  # ... in runs of 8 adjacent entries (a cache line each: one entry a line cost a miss each)
SAMPLE_MARGIN = 8  # the cut is the sample's (1.5 m / stride + 8)-th best: about 1.5 m candidates, rarely fewer than m
SCAN_RUN = 8  # values a scan for the candidates tests at once (vectorised) before looking at them one by one

# ---- where work runs

PARALLEL_MIN_WORK = 1_000_000  # elementary steps below which one thread is faster than two (kernels.parallel)
PYTHON_MAX_WORK = 200_000  # elementary steps the plain-Python twin takes on while the compiled kernels are not
# loaded yet: the invented corpus's largest call is about 3,000, Cranfield's 2.5 million (the twin runs ~1 us a
# step: 0.2 s at most, against ~25 s for numba to compile every kernel on a fresh clone)
UNCOMPILED_PYTHON_MAX_WORK = 2_000_000  # ... and while numba's cache on disk lacks them, in a one-shot command
# (dispatch.serve_uncompiled): a kernel's compile costs 1-30 s, its twin ~1 us a step (bench/first_run.py)
VECTORISED_MAX_WORK = 100_000_000  # ... the steps a kernel's numpy twin takes on then (kernels/vectorised.py: about
# 10-50 ns a step, its arrays a block of questions at a time), before compiling pays (bench/first_run.py)
