"""The data: `dataset` (documents, questions, judgements and TREC runs, parsed from every upload format, each
error naming its file and line), `text` (the tokeniser and term index), `embeddings` (precomputed vectors read and
aligned with a dataset) and `statistics` (a dataset's sizes and judgements per question).
"""
