"""What every command of the command line shares: argparse's errors as one line, text made safe for a terminal,
strict JSON. Only the standard library and numpy below it: `gate`, `experiments`, `workspace` and `--help` load
this and their own module, nothing of the engine (retrieval/cli/__init__.py)."""

from __future__ import annotations

import argparse
import json

from ..core.errors import InputError
from ..core.jsonable import json_ready
from ..core.words import escape_control


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit status 2, like every other bad input here."""

    def error(self, message: str) -> None:  # noqa: D102 - argparse hook
        raise InputError(message)


def _t(value: object) -> str:
    """Text for the terminal: every control character (C0, DEL and C1: ESC, tab, newline too) written as an escape,
    so that an id or a message cannot drive the terminal or break a line."""
    return escape_control(str(value))


def print_json(obj: object) -> None:
    """A report as strict JSON: no NaN or Infinity (null instead), every character beyond ASCII escaped."""
    print(json.dumps(json_ready(obj), indent=2, allow_nan=False, ensure_ascii=True))


VERDICT = "verdict: "  # the line of `tune` that says tuning.verdict's text
