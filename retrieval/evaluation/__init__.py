"""From rankings to numbers: `metrics` (per-question values), `experiment` (an `Evaluation` of every system,
`compare`), `stats` (the bootstrap), `significance` (permutation tests, Holm), `gate` (the regression gate) and
`report` (CSV, TREC and JSON exports).
"""
