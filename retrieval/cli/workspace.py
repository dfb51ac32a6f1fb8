"""`workspace export|import|trash|delete|restore`: the whole workspace as one zip, and its trash."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from ..core.errors import InputError
from ..core.words import plural
from ..corpus import dataset as datasets
from ..store import access, transfer, workspace
from .common import _Parser, _t


def _workspace_arguments(k: argparse.ArgumentParser) -> None:
    """`workspace`'s arguments."""
    ks = k.add_subparsers(dest="action", required=True, parser_class=_Parser)
    ke = ks.add_parser("export", help="write the workspace to a zip")
    ke.add_argument("file", help="the zip to write (replaced whole, or not at all)")
    ke.set_defaults(func=cmd_workspace_export)
    ki = ks.add_parser("import", help="read an exported zip into an empty store (all of it, or nothing)")
    ki.add_argument("file", help="the zip to read")
    ki.set_defaults(func=cmd_workspace_import)
    kt = ks.add_parser(
        "trash", help="list the deleted datasets: who deleted each, when, and until when it can be restored"
    )
    kt.add_argument("--json", action="store_true", help="print JSON instead of text")
    kt.set_defaults(func=cmd_workspace_trash)
    kd = ks.add_parser(
        "delete", help="move a dataset, with its runs, grades and experiments, to the trash (its owner or an admin)"
    )
    kd.set_defaults(func=cmd_workspace_delete)
    kr = ks.add_parser("restore", help="bring a dataset back from the trash (its owner or an admin)")
    kr.set_defaults(func=cmd_workspace_restore)
    for parser in (kd, kr):
        parser.add_argument("dataset", help="the dataset's id (as the Data page and `workspace trash` list it)")
        parser.add_argument(
            "--as",
            dest="user",
            metavar="NAME",
            default=None,
            help="who you are, as the proxy names you (default: your login name); an admin if in "
            f"${access.ADMINS_ENV}, or when ${access.USER_HEADER_ENV} is not set",
        )
    for parser in (ke, ki, kt, kd, kr):
        parser.add_argument("--store", metavar="URL", help="the workspace's database URL (default: the app's)")


def cmd_workspace_export(args: argparse.Namespace) -> int:
    data = transfer.export_workspace(workspace.open_workspace(args.store))
    target = Path(args.file)
    tmp = target.with_name(target.name + ".part")
    try:
        tmp.write_bytes(data)
        os.replace(tmp, target)
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise InputError(f"{target}: cannot be written ({e.strerror or e})") from None
    print(f"wrote {target}: {len(data):,} bytes")
    return 0


def cmd_workspace_import(args: argparse.Namespace) -> int:
    n = transfer.import_workspace(
        workspace.open_workspace(args.store),
        datasets.read_file(Path(args.file)),
        args.file,
        datasets.zip_limits(datasets.CLI_LIMITS),
    )
    print(f"imported {plural(n, 'dataset')} from {_t(args.file)}")
    return 0


def _actor(args: argparse.Namespace) -> access.Actor:
    """Who runs the command: `--as NAME`, else the login name (the store checks what they may change)."""
    name = (args.user or os.environ.get("USER") or os.environ.get("USERNAME") or "").strip()
    if not name:
        raise InputError("--as: say who you are (no login name is known here)")
    return access.actor(name)


def cmd_workspace_trash(args: argparse.Namespace) -> int:
    ws = workspace.open_workspace(args.store)
    ws.purge_expired()
    days, gone = workspace.trash_days(), ws.trash()
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "id": e.id,
                        "name": e.name,
                        "owner": e.owner,
                        "deleted_by": e.deleted_by,
                        "deleted_at": e.deleted_at.isoformat(),
                        "purged_at": e.purged_at(days).isoformat(),
                    }
                    for e in gone
                ],
                indent=2,
            )
        )
        return 0
    if not gone:
        print("the trash is empty")
    for e in gone:
        print(
            f"{e.id} {_t(e.name)}: deleted by {_t(e.deleted_by or '')} at {e.deleted_at:%Y-%m-%d %H:%M} UTC, owner "
            f"{_t(e.owner or 'nobody')}, restorable until {e.purged_at(days):%Y-%m-%d %H:%M} UTC"
        )
    return 0


def cmd_workspace_delete(args: argparse.Namespace) -> int:
    entry = workspace.open_workspace(args.store).delete_dataset(args.dataset, _actor(args))
    print(
        f"moved {_t(entry.name)} ({entry.id}) to the trash: restorable until "
        f"{entry.purged_at(workspace.trash_days()):%Y-%m-%d %H:%M} UTC (workspace restore {entry.id})"
    )
    return 0


def cmd_workspace_restore(args: argparse.Namespace) -> int:
    entry = workspace.open_workspace(args.store).restore_dataset(args.dataset, _actor(args))
    print(f"restored {_t(entry.name)} ({entry.id}) with its runs, grades and experiments")
    return 0


ARGUMENTS = {  # each command's arguments, for retrieval/cli/__init__.py's parser
    "workspace": _workspace_arguments,
}
