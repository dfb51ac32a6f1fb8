"""`warmup`: compile the kernels once (numba's cache on disk), so that no first run or first visit waits."""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time

from ..core.words import plural
from ..engine.engine import warm_up
from . import compiled


def _warmup_arguments(w: argparse.ArgumentParser) -> None:
    """`warmup`'s arguments."""
    w.add_argument("--quiet", action="store_true", help="print nothing")
    w.add_argument("--with-parent", action="store_true", help=argparse.SUPPRESS)  # the app's child: ends with it
    w.set_defaults(func=cmd_warmup)


def _exit_with_parent() -> None:
    """End this process when the one that started it ends (a server stopped mid warm-up leaves nothing behind), and
    yield the processor to it meanwhile."""
    parent = os.getppid()
    if hasattr(os, "nice"):  # behind the server it warms up for: its first pages come first on a busy machine
        os.nice(10)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def cmd_warmup(args: argparse.Namespace) -> int:
    """`warmup`: compile (or load) every kernel, say how long it took."""
    notice = compiled.start(args, warmup=True)
    if args.with_parent:
        _exit_with_parent()
    t = time.perf_counter()
    sigs = warm_up()
    if notice is not None and sigs:  # a kernel numba compiles inside another that calls it is not announced alone
        print(
            f"all {plural(len(sigs), 'kernel')} ready: {len(notice.compiled)} compiled by this command, the others "
            "loaded from numba's cache or compiled inside the kernels that call them",
            file=sys.stderr,
        )
    if not args.quiet:
        print(
            f"kernels ready: {plural(len(sigs), 'kernel')}, {plural(sum(sigs.values()), 'signature')}, "
            f"{time.perf_counter() - t:.1f} s"
            if sigs
            else "numba is disabled (NUMBA_DISABLE_JIT): the kernels run as plain Python"
        )
    return 0


ARGUMENTS = {  # each command's arguments, for retrieval/cli/__init__.py's parser
    "warmup": _warmup_arguments,
}
