"""Keep Numba's on-disk cache of redmax's kernels consistent with their sources.

Numba checks a cached function against the modification stamp of its own source file only.  A kernel that
calls a kernel from another file carries a compiled copy of that callee, so editing the callee's file (or a
checkout or upgrade that keeps the caller's file untouched) would leave the caller running the old callee.
:func:`refresh`, run once when ``redmax`` is imported, hashes every source file of the package that defines
Numba functions and, when the hash differs from the one stored in a cache directory, deletes the cached
kernels there; they recompile on first use.  Cost: a few milliseconds per import.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

STAMP = "redmax-kernels.sha256"
_ROOT = Path(__file__).resolve().parent


def sources_digest(root: Path = _ROOT) -> str:
    """SHA-256 over the paths and contents of the package's source files that mention ``njit``."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*.py")):
        data = p.read_bytes()
        if b"njit" in data:
            h.update(p.relative_to(root).as_posix().encode())
            h.update(b"\0")
            h.update(data)
    return h.hexdigest()


def cache_dirs() -> set[Path]:
    """Directories where Numba caches redmax's kernels: those of the imported modules' dispatchers, and the
    in-tree ``__pycache__`` of every package folder with Numba sources."""
    from numba.core.registry import CPUDispatcher

    dirs = {p.parent / "__pycache__" for p in _ROOT.rglob("*.py") if b"njit" in p.read_bytes()}
    dirs = {d for d in dirs if d.is_dir()}
    for name, mod in list(sys.modules.items()):
        if name == "redmax" or name.startswith("redmax."):
            for obj in list(vars(mod).values()):
                path = getattr(getattr(obj, "_cache", None), "_cache_path", None)
                if isinstance(obj, CPUDispatcher) and path:
                    dirs.add(Path(path))
    return dirs


def refresh(digest: str | None = None, dirs=None) -> list[Path]:
    """Delete cached kernels compiled from other sources; returns the directories that were cleared."""
    digest = digest or sources_digest()
    cleared = []
    for d in sorted(cache_dirs() if dirs is None else dirs):
        stamp = d / STAMP
        try:
            if stamp.read_text() == digest:
                continue
        except OSError:
            pass  # no stamp yet (first run, or a cache made before this check existed)
        for f in list(d.glob("*.nbi")) + list(d.glob("*.nbc")):
            f.unlink(missing_ok=True)
        try:
            d.mkdir(parents=True, exist_ok=True)
            stamp.write_text(digest)
        except OSError:
            pass  # read-only location: Numba cannot cache there either
        cleared.append(d)
    return cleared
