"""Run the benchmark scripts and rewrite their sections of docs/benchmarks.md with what they print.

Usage::

    python benchmarks/report.py                      # every benchmark, quick mode, one after the other
    python benchmarks/report.py step vs_pinocchio    # only these
    python benchmarks/report.py --full step          # the full runs (slower, steadier numbers)
    python benchmarks/report.py --print step         # print the section instead of writing it

Each section of docs/benchmarks.md sits between ``<!-- BEGIN benchmarks/NAME.py -->`` and
``<!-- END benchmarks/NAME.py -->``; everything outside the markers is left as it is. A section holds the command
that was run, the machine (CPU model, logical CPUs, load average before the run, Python, NumPy, Numba) and the
script's output, verbatim. Run it on a quiet machine with a warm Numba cache (``redmax compile --all`` first), and
nothing else running: the scripts time in one process and other load moves their numbers.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DOC = ROOT / "docs" / "benchmarks.md"

# name -> (quick arguments, full arguments)
BENCHMARKS: dict[str, tuple[list[str], list[str]]] = {
    "vs_pinocchio": (["--quick"], []),
    "step": (["--quick"], []),
    "derivatives": (["--quick", "--no-slope"], []),
    "constraints": ([], []),
    "adjoint": (["--quick", "--repeat", "3"], []),
    "scaling": (["--plot", "docs/gallery/scaling.png"], ["--plot", "docs/gallery/scaling.png"]),
    "friction": (["--plot", "docs/gallery/friction_chain.png", "--plot-klann", "docs/gallery/friction_klann.png"],
                 ["--plot", "docs/gallery/friction_chain.png", "--plot-klann", "docs/gallery/friction_klann.png"]),
    "rollout": (["--quick"], []),
    "sweep": ([], []),
}


def begin(name: str) -> str:
    return f"<!-- BEGIN benchmarks/{name}.py -->"


def end(name: str) -> str:
    return f"<!-- END benchmarks/{name}.py -->"


def machine() -> str:
    """One line naming the machine and the software."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import numba
    import numpy

    load = f", load average {os.getloadavg()[0]:.1f} before the run" if hasattr(os, "getloadavg") else ""
    return (f"{cpu}, {os.cpu_count()} logical CPUs{load}; {platform.system()}, Python {platform.python_version()}, "
            f"NumPy {numpy.__version__}, Numba {numba.__version__}")


def run(name: str, full: bool) -> str:
    """Run one benchmark script and return its section (without the markers)."""
    args = BENCHMARKS[name][1 if full else 0]
    command = " ".join(["python", f"benchmarks/{name}.py", *args])
    where = machine()
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, str(HERE / f"{name}.py"), *args], cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(f"{command} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    body = proc.stdout.rstrip("\n")
    return (f"`{command}` ({seconds:.0f} s) on {where}:\n\n"
            f"```text\n{body}\n```")


def replace_section(doc: Path, name: str, section: str) -> None:
    """Put ``section`` between the markers of ``name`` in ``doc``."""
    text = doc.read_text(encoding="utf-8")
    a, b = text.find(begin(name)), text.find(end(name))
    if a < 0 or b < a:
        raise SystemExit(f"{doc}: no section for benchmarks/{name}.py ({begin(name)} ... {end(name)})")
    text = text[:a + len(begin(name))] + "\n" + section + "\n" + text[b:]
    doc.write_text(text, encoding="utf-8")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("names", nargs="*", help=f"benchmarks to run (default: all of {', '.join(BENCHMARKS)})")
    ap.add_argument("--full", action="store_true", help="the scripts' full runs instead of their quick modes")
    ap.add_argument("--print", action="store_true", help="print the sections instead of writing the page")
    ap.add_argument("--doc", type=Path, default=DOC, help="the page to rewrite (default docs/benchmarks.md)")
    a = ap.parse_args(argv)
    names = a.names or list(BENCHMARKS)
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        ap.error(f"unknown benchmark {unknown[0]!r}; expected one of {', '.join(BENCHMARKS)}")
    for name in names:
        print(f"running benchmarks/{name}.py ...", file=sys.stderr, flush=True)
        section = run(name, a.full)
        if a.print:
            print(section)
        else:
            replace_section(a.doc, name, section)
            print(f"wrote its section of {a.doc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
