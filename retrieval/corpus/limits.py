"""What a read may cost: the largest grade, the longest text, and the bytes a zip's members may expand to, checked
on their declared sizes and again while they are decompressed (a 2 MB zip can hold 2 GB of zeros)."""

from __future__ import annotations

import os
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

from ..core.environment import bytes_from_env
from ..core.errors import InputError

# The largest grade a judgement may carry, and negated the lowest (0 or less still means not relevant). nDCG_exp's gain is 2^g - 1, which
# overflows float64 past g = 1023 and turns every mean it reaches into NaN; 100 keeps any sum of gains finite
# and is far above any real grading scale (TREC and BEIR grade 0-4).
MAX_GRADE = 100


# The longest document or question text, in characters, in every format (JSONL and CSV/TSV alike); the csv
# module's own field limit is raised to it.
MAX_TEXT_CHARS = 8 * 2**20
# What the files read from a zip may expand to, in bytes: each member, and the members read all together,
# checked against their declared sizes and again while decompressing (a 2 MB zip can hold 2 GB of zeros).
# The app, a server strangers reach, gets the lower bounds; the command line, which serves one person, the
# higher. The environment variable RETRIEVAL_LAB_MAX_BYTES (bytes, or with a K, M or G suffix) replaces both
# bounds of either, e.g. RETRIEVAL_LAB_MAX_BYTES=20G; it is read in `zip_limits` only.
MAX_MEMBER_BYTES = 256 * 2**20
MAX_TOTAL_BYTES = 512 * 2**20
CLI_MAX_MEMBER_BYTES = 4 * 2**30
CLI_MAX_TOTAL_BYTES = 8 * 2**30
MAX_BYTES_ENV = "RETRIEVAL_LAB_MAX_BYTES"
_CHUNK = 2**20


@dataclass(frozen=True)
class ZipLimits:
    """Bounds on what the members of a zip may expand to, in bytes: each one, and all those read together."""

    member: int
    total: int


APP_LIMITS = ZipLimits(MAX_MEMBER_BYTES, MAX_TOTAL_BYTES)
CLI_LIMITS = ZipLimits(CLI_MAX_MEMBER_BYTES, CLI_MAX_TOTAL_BYTES)


def zip_limits(default: ZipLimits = APP_LIMITS) -> ZipLimits:
    """`default`, or both bounds set by $RETRIEVAL_LAB_MAX_BYTES when it is set (an error names it when malformed)."""
    if not os.environ.get(MAX_BYTES_ENV, "").strip():
        return default
    n = bytes_from_env(MAX_BYTES_ENV, 0)
    return ZipLimits(n, n)


_RAISE_IT = f"(raise it with the environment variable {MAX_BYTES_ENV}, e.g. {MAX_BYTES_ENV}=20G)"


def _declared(zf: zipfile.ZipFile, members: tuple[str, ...], source: str, limits: ZipLimits) -> list[zipfile.ZipInfo]:
    """The members' entries, or an error when what they declare is beyond `limits`."""
    infos = [zf.getinfo(m) for m in members]
    for info in infos:
        if info.file_size > limits.member:
            raise InputError(
                f"{source}/{info.filename}: declares {info.file_size:,} bytes uncompressed, more than the "
                f"limit of {limits.member:,} bytes per member {_RAISE_IT}"
            )
    declared = sum(info.file_size for info in infos)
    if declared > limits.total:
        raise InputError(
            f"{source}: {', '.join(members)} declare {declared:,} bytes uncompressed, more than the limit "
            f"of {limits.total:,} bytes in all {_RAISE_IT}"
        )
    return infos


def _member_chunks(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, source: str, limits: ZipLimits, total: list[int]
) -> Iterator[bytes]:
    """A member's bytes a chunk at a time as it is decompressed, refused once past `limits` (`total`: the bytes of
    the members read before it, counted on)."""
    size = 0
    try:
        with zf.open(info) as f:
            while chunk := f.read(_CHUNK):
                size += len(chunk)
                total[0] += len(chunk)
                if size > limits.member:
                    raise InputError(
                        f"{source}/{info.filename}: expands past the limit of {limits.member:,} bytes "
                        f"per member {_RAISE_IT}"
                    )
                if total[0] > limits.total:
                    raise InputError(
                        f"{source}/{info.filename}: the members expand past the limit of "
                        f"{limits.total:,} bytes in all {_RAISE_IT}"
                    )
                yield chunk
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as e:
        raise InputError(f"{source}/{info.filename}: damaged zip member ({e})") from None
    except (RuntimeError, NotImplementedError) as e:  # encrypted member, unsupported compression
        raise InputError(f"{source}/{info.filename}: cannot be read ({e})") from None


def read_members(zf: zipfile.ZipFile, members: tuple[str, ...], source: str, limits: ZipLimits) -> list[bytearray]:
    """The bytes of zip members, each bound by `limits` on its declared size and again while it is decompressed."""
    out, total = [], [0]
    for info in _declared(zf, members, source, limits):
        buf = bytearray()
        for chunk in _member_chunks(zf, info, source, limits, total):
            buf += chunk
        out.append(buf)
    return out
