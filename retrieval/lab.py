"""`retrieval-lab`: start the Streamlit app, from a source checkout or from an installed package.

Installed (`pip install .`), the app (app.py, pages/, ui/, .streamlit/config.toml) sits in `retrieval/_app/`;
in a source checkout it is the repository root, where `streamlit run app.py` runs the same files. Arguments are
passed to `streamlit run` (e.g. `retrieval-lab --server.port 8600`). Streamlit reads the config.toml beside
app.py, so the app's settings apply whatever the current folder. Streamlit is imported only when the command
runs: importing `retrieval` never imports it.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CANDIDATES = (HERE / "_app", HERE.parent)  # installed, then source checkout


def app_path() -> Path:
    """The app's entry script: the installed copy, else the source checkout's."""
    for folder in CANDIDATES:
        script = folder / "app.py"
        if script.is_file() and (folder / "pages").is_dir() and (folder / "ui").is_dir():
            return script
    raise FileNotFoundError(f"the retriever lab's app.py (with pages/ and ui/) is in none of: {', '.join(map(str, CANDIDATES))}")


def main(argv: list[str] | None = None) -> None:
    """Run `streamlit run <app.py> [argv]`; Streamlit's command line exits with its status."""
    try:
        script = app_path()
    except FileNotFoundError as e:
        raise SystemExit(f"retrieval-lab: {e}") from None
    from streamlit.web import cli  # noqa: PLC0415 - the app's dependency, loaded by the command only

    cli.main(["run", str(script), *(sys.argv[1:] if argv is None else argv)], prog_name="retrieval-lab")
