"""`retrieval-lab`: start the Streamlit app, from a source checkout or from an installed package.

Installed (`pip install .`), the app (app.py, pages/, ui/, .streamlit/config.toml) sits in `retrieval/_app/`;
in a source checkout it is the repository root, where `streamlit run app.py` runs the same files. Arguments are
passed to `streamlit run` (e.g. `retrieval-lab --server.port 8600`), except -h/--help: the lab's own short help
(`help_text`: what it starts, the address, where the data lives, the environment settings), not Streamlit's
thousands of lines. Streamlit reads the config.toml beside app.py, so the app's settings apply whatever the
current folder. Streamlit is imported only when the command runs: importing `retrieval` never imports it.
"""

from __future__ import annotations

import sys
import textwrap
import tomllib
from pathlib import Path

import sqlalchemy as sa

from .corpus import dataset
from .engine import budget, engine
from .evaluation.comparison import escape_control
from .retrievers import dense
from .store import access, workspace

HERE = Path(__file__).resolve().parent
CANDIDATES = (HERE / "_app", HERE.parent)  # installed, then source checkout
HELP_FLAGS = ("-h", "--help")
STREAMLIT_PORT, STREAMLIT_ADDRESS = 8501, "localhost"  # Streamlit's defaults, where config.toml sets none
USER_HEADER_ENV = access.USER_HEADER_ENV


def app_path() -> Path:
    """The app's entry script: the installed copy, else the source checkout's."""
    for folder in CANDIDATES:
        script = folder / "app.py"
        if script.is_file() and (folder / "pages").is_dir() and (folder / "ui").is_dir():
            return script
    raise FileNotFoundError(
        f"the retriever lab's app.py (with pages/ and ui/) is in none of: {', '.join(map(str, CANDIDATES))}"
    )


def server_settings(script: Path) -> dict:
    """The [server] table of the config.toml beside the app (empty when there is none, or it cannot be read)."""
    try:
        with open(script.parent / ".streamlit" / "config.toml", "rb") as f:
            return dict(tomllib.load(f).get("server", {}))
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def address(server: dict) -> str:
    """Where to point the browser, from the config's [server] table: the address Streamlit prints as it starts
    (its `URL:` line), so the help, the README and the terminal say the same. A server listening on one address
    is reached at that address (the app's config: http://127.0.0.1:8501); one listening on every interface, or
    where no address is set, at http://localhost:8501 (Streamlit's `Local URL:`)."""
    host = str(server.get("address") or STREAMLIT_ADDRESS)
    if host in ("0.0.0.0", "::"):  # every interface of this machine
        host = STREAMLIT_ADDRESS
    if ":" in host:  # an IPv6 address, bracketed in a URL
        host = f"[{host}]"
    return f"http://{host}:{server.get('port', STREAMLIT_PORT)}"


def _store() -> str:
    """The workspace's database as the app would open it now, its password hidden."""
    try:
        return sa.make_url(workspace.default_url()).render_as_string(hide_password=True)
    except Exception:  # noqa: BLE001 - a malformed $RETRIEVAL_LAB_DATABASE_URL: the app says so when it opens it
        return f"not a database URL (${workspace.URL_ENV})"


def _mib(n: int) -> str:
    """Bytes as '4 GiB' or '256 MiB', its space a no-break one (help_text's lines break elsewhere)."""
    return f"{n / 2**30:g}\u00a0GiB" if n >= 2**30 else f"{n / 2**20:g}\u00a0MiB"


def help_text(width: int = 80) -> str:
    """`retrieval-lab --help`: what it starts, where to point the browser, where the data lives now and the
    environment settings, each default from the module that applies it; lines of at most `width` characters but
    for a long path."""
    try:
        script = app_path()
    except FileNotFoundError as e:
        script, found = None, f"not found: {e}"
    else:
        found = str(script)
    server = server_settings(script) if script else {}
    settings = [
        (
            workspace.HOME_ENV,
            f"the workspace's folder: datasets, runs, embeddings, grades and experiments in "
            f"SQLite (default {workspace.DEFAULT_HOME})",
        ),
        (workspace.URL_ENV, "a database instead (postgresql+psycopg://user@host/db): servers share one workspace"),
        (dense.CACHE_ENV, "the dense model's vectors, encoded once per corpus (default ~/.cache/retrieval-lab)"),
        (
            workspace.MAX_BYTES_ENV,
            f"the workspace's stored files in all (default {_mib(workspace.DEFAULT_MAX_BYTES)}; bytes or e.g. 10G)",
        ),
        (
            dataset.MAX_BYTES_ENV,
            f"what an uploaded zip may expand to (default {_mib(dataset.MAX_MEMBER_BYTES)} a "
            f"file, {_mib(dataset.MAX_TOTAL_BYTES)} in all)",
        ),
        (
            engine.MAX_CHARS_ENV,
            f"the text a corpus may hold to be indexed (default {engine.APP_MAX_CHARS:,} characters)",
        ),
        (
            budget.BUDGET_ENV,
            f"the memory the server's indexes may take in all (default "
            f"{_mib(budget.DEFAULT_BUDGET)}; bytes or e.g. 8G)",
        ),
        (budget.IDLE_ENV, f"seconds an index no one uses is kept (default {budget.DEFAULT_IDLE:g})"),
        (
            USER_HEADER_ENV,
            "the header an authenticating proxy sets to the signed-in user, e.g. X-Forwarded-User "
            "(a request without it may only look)",
        ),
        (access.ADMINS_ENV, "the signed-in names that may rename, delete and restore any dataset (comma-separated)"),
        (
            workspace.TRASH_DAYS_ENV,
            f"days a deleted dataset stays restorable in the trash (default {workspace.DEFAULT_TRASH_DAYS:g})",
        ),
        (workspace.MAX_GRADES_ENV, f"grades a rater may give one dataset (default {workspace.DEFAULT_MAX_GRADES:,})"),
    ]
    pad = max(len(name) for name, _ in settings) + 4

    def wrap(text: str, indent: str = "", hanging: str = "") -> list[str]:
        lines = textwrap.wrap(
            escape_control(text),
            width,
            initial_indent=indent,
            subsequent_indent=hanging or indent,
            break_long_words=False,
            break_on_hyphens=False,
        )
        return [line.replace("\u00a0", " ") for line in lines]

    return (
        "\n".join(
            [
                "usage: retrieval-lab [STREAMLIT OPTIONS]",
                "",
                *wrap(
                    f"Starts the retriever lab, a Streamlit server ({found}): the Tour on the invented corpus, then every "
                    "other page. "
                    + (
                        "No browser opens by itself (headless): point yours at"
                        if server.get("headless")
                        else "Streamlit opens it in your browser, at"
                    )
                ),
                f"  {escape_control(address(server))}",
                *wrap(
                    (
                        f"It listens on {server['address']} only."
                        if server.get("address")
                        else "It listens on every network interface (its config.toml sets no server.address)."
                    )
                    + " Another port: retrieval-lab --server.port 8600"
                ),
                "",
                "Where the data lives now:",
                f"  workspace      {escape_control(_store())}",
                f"  dense vectors  {escape_control(dense.cache_dir())}",
                "",
                "Environment settings:",
                *(line for name, text in settings for line in wrap(f"{name:{pad - 4}s}  {text}", "  ", " " * pad)),
                "",
                *wrap(
                    "Every other argument goes to `streamlit run` (its options: streamlit run --help). The command line: "
                    "python -m retrieval --help"
                ),
            ]
        )
        + "\n"
    )


def _asks_help(args: list[str]) -> bool:
    """-h or --help among the arguments (before a `--`, after which arguments are the script's)."""
    own = args[: args.index("--")] if "--" in args else args
    return any(a in HELP_FLAGS for a in own)


def main(argv: list[str] | None = None) -> None:
    """Run `streamlit run <app.py> [argv]`; Streamlit's command line exits with its status. With -h or --help,
    print the lab's own help instead and return."""
    args = sys.argv[1:] if argv is None else list(argv)
    if _asks_help(args):
        sys.stdout.write(help_text())
        return
    try:
        script = app_path()
    except FileNotFoundError as e:
        raise SystemExit(f"retrieval-lab: {e}") from None
    from streamlit.web import cli  # noqa: PLC0415 - the app's dependency, loaded by the command only

    cli.main(["run", str(script), *args], prog_name="retrieval-lab")
