"""Reading from disk: a regular file's bytes and a folder's names, or one error naming the path (a FIFO, a device or
a folder is never read)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..core.errors import InputError

_NOT_REGULAR = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def read_file(path: Path) -> bytes:
    """A regular file's bytes, or one error naming it: missing, unreadable, or not a regular file (a FIFO, a device
    such as a `.zip` link to /dev/zero, a folder), which is never read (opened without blocking, checked, closed)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO with no writer opens at once instead of hanging
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror})") from None
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        kind = next((what for test, what in _NOT_REGULAR if test(mode)), None if stat.S_ISREG(mode) else "not a file")
        if kind is not None:
            raise InputError(f"{path}: {kind}, not a regular file: not read")
        os.set_blocking(fd, True)
        try:
            return f.read()
        except OSError as e:
            raise InputError(f"{path}: cannot be read ({e.strerror})") from None


def _folder_names(path: Path) -> list[str]:
    """The names in a folder, or one error naming it when it cannot be listed (no read permission)."""
    try:
        return os.listdir(path)
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror})") from None
