"""The retrievers: `base` (the interface, the narrow `Context` a run reads, the fusion's view of a member),
`ranking` (best lists and exact judged ranks), `bm25`, `lsa`, `dense`, and `systems` (the registry, TREC runs
and dense vectors as systems).
"""
