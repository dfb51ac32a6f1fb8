"""The data: `dataset` (the one import path of documents, questions, judgements and TREC runs; the model in `model`,
a reader per upload format in `formats/`, each error naming its file and line, the bounds of a read in `limits`,
the writers in `writers`), `analysis` (stop lists, stemmers), `text` (the term index), `embeddings` (precomputed
vectors read and checked), `alignment` (vectors in a dataset's order) and `statistics` (a dataset's sizes and
judgements per question).
"""
