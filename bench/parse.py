"""What the loaders' parse of a file costs: a BEIR folder read (its corpus.jsonl, queries.jsonl and qrels parsed,
the dataset assembled) and a synthetic collection's files in every format the loaders read, timed as whole
processes from outside (e.g. ``/usr/bin/time -v``, several runs, the median quoted).

    python bench/parse.py make bench/out/parse 100000   # the synthetic files (bench/synthetic.py's corpus): once
    python bench/parse.py folder /path/to/a/beir/folder  # load_beir_dir of a BEIR folder
    python bench/parse.py files bench/out/parse          # its documents as JSONL, CSV and TSV, and its qrels
    python bench/parse.py zip bench/out/parse            # the same collection as a BEIR zip (load_beir_zip)

Each parse prints what it read, so a run that read nothing is seen. The numbers are in bench/RESULTS.md.
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from bench import synthetic  # noqa: E402
from retrieval.corpus import dataset as datasets  # noqa: E402


def make(out: Path, n_docs: int) -> None:
    """The synthetic collection's documents as JSONL, CSV and TSV, its qrels, and the whole as a BEIR zip."""
    ds = synthetic.generate(n_docs)
    out.mkdir(parents=True, exist_ok=True)
    (out / "docs.jsonl").write_bytes(
        b"".join(orjson.dumps({"_id": i, "text": t}) + b"\n" for i, t in zip(ds.doc_ids, ds.doc_texts))
    )
    for name, delimiter in (("docs.csv", ","), ("docs.tsv", "\t")):
        buf = io.StringIO(newline="")
        w = csv.writer(buf, delimiter=delimiter)
        w.writerow(["id", "text"])
        w.writerows(zip(ds.doc_ids, ds.doc_texts))
        (out / name).write_text(buf.getvalue(), newline="")
    (out / "qrels.txt").write_text(datasets.format_qrels(ds.judgements()))
    (out / "beir.zip").write_bytes(datasets.beir_zip(ds))


def main(argv: list[str]) -> int:
    what, path = argv[0], Path(argv[1])
    if what == "make":
        make(path, int(argv[2]))
    elif what == "folder":
        ds = datasets.load_beir_dir(path)
        print(ds.n_docs, ds.n_queries, len(ds.qrels))
    elif what == "files":
        for name in ("docs.jsonl", "docs.csv", "docs.tsv"):
            print(name, len(datasets.parse_records(datasets.read_file(path / name), name)))
        print("qrels", len(datasets.parse_qrels(datasets.read_file(path / "qrels.txt"), "qrels.txt")))
    elif what == "zip":
        ds = datasets.load_beir_zip(datasets.read_file(path / "beir.zip"), "beir.zip", datasets.CLI_LIMITS)
        print(ds.n_docs, ds.n_queries, len(ds.qrels))
    else:
        raise SystemExit(f"unknown command {what!r}: make, folder, files or zip")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
