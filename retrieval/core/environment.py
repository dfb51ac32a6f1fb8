"""Sizes set by environment variables, read one way everywhere (an error names the variable)."""

from __future__ import annotations

import os
import re

from .errors import InputError


def bytes_from_env(name: str, default: int) -> int:
    """The number of bytes $name sets ("2000000000", "512M", "2G", "20gb"; K, M, G are powers of 1024), else `default`.

    >>> os.environ["EXAMPLE_BYTES"] = "2G"; bytes_from_env("EXAMPLE_BYTES", 1)
    2147483648
    >>> del os.environ["EXAMPLE_BYTES"]; bytes_from_env("EXAMPLE_BYTES", 1)
    1
    """
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    m = re.fullmatch(r"(\d+)\s*([kmg]?)b?", value.lower())
    if not m or int(m.group(1)) < 1:
        raise InputError(f"{name}={value!r}: expected a number of bytes >= 1, e.g. 2000000000 or 2G")
    return int(m.group(1)) * 1024 ** " kmg".index(m.group(2) or " ")
