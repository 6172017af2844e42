"""Run benchmark scripts on two versions of redmax side by side, in one session, and compare their numbers.

Usage::

    python benchmarks/compare.py [--base REV] [--rounds R] [--quick] [SCRIPT ...]   # SCRIPT: step or step.py

``REV`` (default ``main``) is checked out into a temporary git worktree (its C extension built from a wheel of that
tree); the working tree is the other side.  Each script (default: vs_pinocchio.py, step.py, derivatives.py,
constraints.py, adjoint.py) runs ``R`` times on each side, alternating base and new so that both meet the same
phases of a shared machine, each run in a fresh interpreter with its own Numba cache folder (warmed by a first run
that is not counted).  The scripts print their own ratios to the competitor (Pinocchio, MuJoCo); this pairs the
lines of the two outputs that read the same once their numbers are blanked out, takes the median of every number
over the rounds, and prints each paired line as ``new [base, change]``.  Lines whose numbers moved by more than
``--flag`` (default 10%) in either direction are marked ``!``.  Needs git and the test extras.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT = ["vs_pinocchio.py", "step.py", "derivatives.py", "constraints.py", "adjoint.py"]
_NUM = re.compile(r"[-+]?(?:\d+(?:,\d{3})*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")


def _git(*args, cwd=ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def _extension(tree: Path) -> None:
    """Put the C extension ``redmax._ccall`` into ``tree/src/redmax`` (from a wheel built of that tree)."""
    pkg = tree / "src" / "redmax"
    if list(pkg.glob("_ccall*.so")) or list(pkg.glob("_ccall*.pyd")):
        return
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", d, str(tree)], check=True)
        wheel = next(Path(d).glob("redmax-*.whl"))
        with zipfile.ZipFile(wheel) as z:
            for name in z.namelist():
                if name.startswith("redmax/_ccall"):
                    (pkg / Path(name).name).write_bytes(z.read(name))


def _run(tree: Path, script: str, extra: list[str], cache: Path) -> str:
    env = dict(os.environ, PYTHONPATH=str(tree / "src"), NUMBA_CACHE_DIR=str(cache))
    out = subprocess.run([sys.executable, str(tree / "benchmarks" / script), *extra], env=env, cwd=tree,
                         capture_output=True, text=True)
    if out.returncode != 0:
        return f"FAILED ({out.returncode}): {out.stderr.strip().splitlines()[-1] if out.stderr.strip() else ''}\n"
    return out.stdout


def _lines(text: str) -> list[tuple[str, list[float]]]:
    """(shape, numbers) of every line that holds a number; ``shape`` is the line with its numbers blanked."""
    out = []
    for line in text.splitlines():
        nums = [float(m.group().replace(",", "")) for m in _NUM.finditer(line)]
        if nums:
            out.append((_NUM.sub("#", line.rstrip()), nums))
    return out


def _medians(runs: list[str]) -> dict[tuple[str, int], list[float]]:
    """Per (shape, occurrence): the median of every number over the runs (lines missing in a run are skipped)."""
    acc: dict[tuple[str, int], list[list[float]]] = {}
    for text in runs:
        seen: dict[str, int] = {}
        for shape, nums in _lines(text):
            k = seen.get(shape, 0)
            seen[shape] = k + 1
            acc.setdefault((shape, k), []).append(nums)
    return {key: [statistics.median(col) for col in zip(*rows, strict=False)] for key, rows in acc.items()
            if len({len(r) for r in rows}) == 1}


def script_names(names: list[str]) -> list[str]:
    """The scripts' file names (``step`` or ``step.py``); raises SystemExit naming any that benchmarks/ lacks."""
    out = [n if n.endswith(".py") else f"{n}.py" for n in names]
    missing = [n for n in out if not (HERE / n).is_file()]
    if missing:
        raise SystemExit(f"compare.py: no benchmark script {', '.join(missing)} in {HERE} "
                         f"(there are: {', '.join(sorted(p.name for p in HERE.glob('*.py')))})")
    return out


def compare(script: str, base: Path, new: Path, rounds: int, extra: list[str], flag: float, tmp: Path) -> None:
    caches = {side: tmp / f"numba-{side}" for side in ("base", "new")}
    for side, tree in (("base", base), ("new", new)):  # compile (not counted)
        _run(tree, script, extra, caches[side])
    outs = {"base": [], "new": []}
    for _ in range(rounds):
        for side, tree in (("base", base), ("new", new)):
            outs[side].append(_run(tree, script, extra, caches[side]))
    mb, mn = _medians(outs["base"]), _medians(outs["new"])
    print(f"\n=== {script} {' '.join(extra)} ({rounds} round(s); each number: new [base, change])")
    for side, texts in outs.items():  # a failed run has no numbers to pair: say so instead of printing nothing
        failed = [t for t in texts if t.startswith("FAILED")]
        if failed:
            print(f"  {side}: {len(failed)} of {rounds} run(s) failed: {failed[0].strip()}")
    for key, nums in mn.items():
        shape = key[0]
        ref = mb.get(key)
        if ref is None or len(ref) != len(nums):
            continue
        parts, worst = [], 0.0
        for a, b in zip(nums, ref, strict=True):
            ch = (a / b - 1.0) if b else 0.0
            worst = max(worst, abs(ch))
            parts.append(f"{a:.4g} [{b:.4g}, {100 * ch:+.0f}%]")
        pieces = shape.split("#")
        line = "".join(x + y for x, y in zip(pieces, [*parts, ""], strict=True))
        print(("! " if worst > flag else "  ") + line.strip())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scripts", nargs="*", default=DEFAULT, help="benchmark scripts (names in benchmarks/)")
    ap.add_argument("--base", default="main", help="git revision to compare against (default main)")
    ap.add_argument("--rounds", type=int, default=3, help="timed runs per side, alternating (default 3)")
    ap.add_argument("--quick", action="store_true", help="pass --quick to the scripts")
    ap.add_argument("--flag", type=float, default=0.10, help="mark lines whose numbers moved more than this")
    a = ap.parse_args(argv)
    a.scripts = script_names(a.scripts)
    rev = _git("rev-parse", a.base)
    tmp = Path(tempfile.mkdtemp(prefix="redmax-compare-"))
    base = tmp / f"base-{rev[:10]}"
    _git("worktree", "add", "--detach", str(base), rev)
    try:
        _extension(base)
        _extension(ROOT)
        print(f"base {rev[:10]} ({a.base}) vs the working tree {_git('rev-parse', '--short', 'HEAD')}"
              f"{' (with uncommitted changes)' if _git('status', '--porcelain', '--untracked-files=no') else ''}")
        for s in a.scripts:
            compare(s, base, ROOT, a.rounds, ["--quick"] if a.quick else [], a.flag, tmp)
    finally:
        _git("worktree", "remove", "--force", str(base))
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
