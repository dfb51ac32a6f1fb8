"""The formats the lab reads, one module each; every parser takes the raw bytes (or a zip member's chunks) and the
name of the file they came from, so a bad line is reported as ``file:line: what is wrong`` (an `InputError`).

| module | what it reads |
|---|---|
| lines.py | what every parser shares: text read a piece at a time, lines numbered, a record's id and text checked |
| jsonl.py | JSONL documents or questions (`_id` or `id`, `title` + `text`) |
| table.py | CSV or TSV documents or questions with a header naming `id` and `text` |
| trec.py | judgements: TREC qrels or a BEIR tsv |
| records.py | documents or questions in any of those, chosen by the file's name; a dataset from three files |
| beir.py | a BEIR folder or zip, and the built-in datasets |

A TREC run is read by `retrieval.corpus.dataset.parse_run`; what the lab writes is `retrieval.corpus.writers`.
"""
