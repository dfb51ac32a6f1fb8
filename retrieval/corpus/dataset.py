"""Datasets: documents, questions and graded judgements, loaded from the shipped corpus or from user files.

Every parser takes the raw bytes and the file name it came from, so a bad line is reported as
``file:line: what is wrong`` (an `InputError`), whatever the source: a path, a zip member or an upload.

This module is the corpus's one import path: the data model (`model.py`), the readers of each format
(`formats/`), the bounds on what a read may cost (`limits.py`), reading from disk (`files.py`) and the writers
(`writers.py`) are re-exported here, and so are the run files' readers (`runs.py`).
"""

from __future__ import annotations

from ..core.errors import InputError
from .files import read_file
from .formats.beir import BUILTIN, DATA_DIR, load, load_beir_dir, load_beir_zip
from .formats.jsonl import json_objects, parse_jsonl
from .formats.lines import Data, text_lines, text_pieces
from .formats.records import from_files, parse_records
from .formats.table import parse_table
from .formats.trec import parse_qrels
from .limits import (
    APP_LIMITS,
    CLI_LIMITS,
    CLI_MAX_MEMBER_BYTES,
    CLI_MAX_TOTAL_BYTES,
    MAX_BYTES_ENV,
    MAX_GRADE,
    MAX_MEMBER_BYTES,
    MAX_TEXT_CHARS,
    MAX_TOTAL_BYTES,
    ZipLimits,
    read_members,
    zip_limits,
)
from .model import DOCUMENT_VALUES, Dataset, Qrels, assemble, valid_grade
from .runs import TrecRun, parse_run, read_run
from .writers import beir_zip, beir_zip_kept, format_qrels

__all__ = [
    "APP_LIMITS",
    "BUILTIN",
    "CLI_LIMITS",
    "CLI_MAX_MEMBER_BYTES",
    "CLI_MAX_TOTAL_BYTES",
    "DATA_DIR",
    "DOCUMENT_VALUES",
    "MAX_BYTES_ENV",
    "MAX_GRADE",
    "MAX_MEMBER_BYTES",
    "MAX_TEXT_CHARS",
    "MAX_TOTAL_BYTES",
    "Data",
    "InputError",
    "Dataset",
    "Qrels",
    "TrecRun",
    "ZipLimits",
    "assemble",
    "beir_zip",
    "beir_zip_kept",
    "format_qrels",
    "from_files",
    "json_objects",
    "load",
    "load_beir_dir",
    "load_beir_zip",
    "parse_jsonl",
    "parse_qrels",
    "parse_records",
    "parse_run",
    "parse_table",
    "read_file",
    "read_members",
    "read_run",
    "text_lines",
    "text_pieces",
    "valid_grade",
    "zip_limits",
]
