"""Each kernel file's `SOURCE_DIGEST`, derived: the digest of the project files it imports from, written into it.

Numba keys its disk cache on a kernel's own file alone (its size and time), never on the files it calls or
inlines from, nor on the thresholds it reads as constants (`core/thresholds.py`). So each kernel file that imports
from another project file carries `SOURCE_DIGEST = "..."`, the first 16 hex digits of the SHA-256 of those files'
bytes in a fixed order: an edit of any of them changes the digest, the line rewritten changes the kernel file, and
numba compiles it afresh instead of loading a stale kernel. Nobody types the value:

    python -m retrieval.kernels.digest          # rewrite every stale SOURCE_DIGEST (until none changes)
    python -m retrieval.kernels.digest --check  # exit 1 naming each stale file

tests/kernels/test_kernels.py fails, naming the file and this command, when a digest is stale.
"""

from __future__ import annotations

import ast
import hashlib
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LINE = re.compile(r'^SOURCE_DIGEST = "([0-9a-f]*)"', re.MULTILINE)
CACHED = re.compile(r"^@njit\(.*cache=True", re.MULTILINE)  # a kernel numba caches on disk


def imports_of(path: Path) -> list[Path]:
    """The project files a kernel file imports from at its top level (`from .name import ...` in the kernels,
    `from ..core.name import ...`), ordered by their path under retrieval/."""
    tree = ast.parse(path.read_text())
    out = set()
    for n in tree.body:
        if isinstance(n, ast.ImportFrom) and n.module and n.level in (1, 2):
            base = (path.parent if n.level == 1 else path.parent.parent).joinpath(*n.module.split("."))
            if base.is_dir():  # `from ..core import workers`: the modules named
                out.update(base / f"{a.name}.py" for a in n.names if (base / f"{a.name}.py").exists())
            else:
                out.add(base.with_suffix(".py"))
    return sorted(out, key=lambda p: p.relative_to(path.parent.parent).as_posix())


def digest_of(path: Path) -> str | None:
    """The SOURCE_DIGEST a kernel file must carry (None: it imports no project file, and carries none)."""
    deps = imports_of(path)
    return hashlib.sha256(b"".join(d.read_bytes() for d in deps)).hexdigest()[:16] if deps else None


def kernel_files(folder: Path = HERE) -> list[Path]:
    """The kernel files whose compiled code numba caches on disk (a kernel compiled with `cache=True`), and any
    file that carries a digest line."""
    return [p for p in sorted(folder.glob("*.py")) if CACHED.search(t := p.read_text()) or LINE.search(t)]


def stale(folder: Path = HERE) -> dict[Path, str | None]:
    """Each kernel file whose SOURCE_DIGEST is not the derived one, with the one it must carry."""
    out = {}
    for p in kernel_files(folder):
        have = LINE.search(p.read_text())
        want = digest_of(p)
        if (have.group(1) if have else None) != want:
            out[p] = want
    return out


def write(folder: Path = HERE) -> list[Path]:
    """Rewrite every stale SOURCE_DIGEST line, again until none changes (a file's new line changes the digest of
    the files importing it). Returns the files written. A file without the line that needs one is an error: the
    line's place (below the imports) is the author's to choose."""
    written: list[Path] = []
    for _ in range(len(kernel_files(folder)) + 1):
        todo = stale(folder)
        if not todo:
            return written
        for p, want in todo.items():
            text = p.read_text()
            if not LINE.search(text) or want is None:
                raise ValueError(f'{p}: add a line SOURCE_DIGEST = "" below its imports, or remove it')
            p.write_text(LINE.sub(f'SOURCE_DIGEST = "{want}"', text, count=1))
            written.append(p)
    raise RuntimeError("SOURCE_DIGEST: the kernel files import each other in a cycle")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--check"]:
        bad = stale()
        for p, want in bad.items():
            print(f"{p.name}: SOURCE_DIGEST should be {want!r} (python -m retrieval.kernels.digest)")
        return 1 if bad else 0
    if args:
        print("usage: python -m retrieval.kernels.digest [--check]", file=sys.stderr)
        return 2
    for p in dict.fromkeys(write()):
        print(f"{p.name}: SOURCE_DIGEST rewritten")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
