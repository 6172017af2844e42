"""``redmax sweep SCENE``: a parameter sweep on Dask, and ``redmax plot STORE.zarr FILE.png``: its figure.

    redmax sweep paper/chain --grid mu=0,0.2,0.4 --grid radius=0.5,1 --out sweep.zarr [--duration T] [--dt H]
                 [--integrator NAME] [--solver NAME] [--param NAME=VALUE] [--trajectory]
                 [--scheduler tcp://host:8786] [--workers N] [--quiet]
    redmax plot sweep.zarr sweep.png [--y H] [--x mu] [--color radius] [--sel NAME=VALUE]

``--grid KEY=V1,V2,...`` (repeatable) is one dimension of the sweep: a scene parameter (values of its type, as
``redmax scenes`` lists them), a simulate option (dt, duration, integrator, solver, baumgarte, ...) or an
initial-state offset ``q0[DOF]`` / ``qd0[DOF]``.  Without ``--scheduler`` the runs use a local cluster of
``--workers`` processes (default: the cores); rerunning into the same ``--out`` store runs only what is missing.
"""

from __future__ import annotations

import os
import time

__all__ = ["add_parser", "add_plot_arguments", "is_store", "plot", "run"]


def add_parser(sub) -> None:
    p = sub.add_parser("sweep", help="run a scene over a grid of parameters on Dask (needs the dist extra)")
    p.add_argument("scene", help="built-in name (e.g. paper/chain) or scene file (.toml)")
    p.add_argument("--grid", action="append", default=[], metavar="KEY=V1,V2,...",
                   help="one dimension of the sweep (repeatable): a scene parameter, a simulate option or "
                        "q0[DOF] / qd0[DOF], e.g. --grid mu=0,0.2,0.4")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a scene parameter common to every run (repeatable)")
    p.add_argument("--out", metavar="STORE.zarr", help="write the results to this Zarr store (resumes into it)")
    p.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                   help="run on this Dask scheduler's workers (start them with --nthreads 1) instead of a local "
                        "cluster")
    p.add_argument("--workers", type=int, help="processes of the local cluster (default: the cores); with "
                                                "--scheduler, the workers to wait for")
    p.add_argument("--duration", type=float, help="simulated time in seconds; default: the scene's")
    p.add_argument("--dt", type=float, help="time step (euler) or sampling interval (ODE); default: the scene's")
    p.add_argument("--integrator", metavar="NAME", help="default: the scene's")
    p.add_argument("--solver", metavar="NAME", help="linear solver of the Euler step; default: the scene's")
    p.add_argument("--trajectory", action="store_true", help="also record t, q, qdot of every run")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors")


def add_plot_arguments(p) -> None:
    """The options ``redmax plot`` takes for a sweep store."""
    p.add_argument("--y", default="H", metavar="VAR", help="sweep store: the variable, e.g. H or q_final[joint1] "
                                                           "(default H)")
    p.add_argument("--x", metavar="DIM", help="sweep store: the horizontal dimension (or a case variable)")
    p.add_argument("--color", metavar="DIM", help="sweep store: the second dimension of a heat map")
    p.add_argument("--sel", action="append", default=[], metavar="DIM=VALUE",
                   help="sweep store: fix a further dimension (repeatable)")


def is_store(path: str) -> bool:
    """Whether ``redmax plot``'s first argument is a sweep store (a ``.zarr`` path or a Zarr folder)."""
    p = os.fspath(path).rstrip("/" + os.sep)
    if p.lower().endswith(".zarr"):
        return True
    return os.path.isdir(p) and any(os.path.exists(os.path.join(p, f)) for f in (".zgroup", "zarr.json"))


def _pairs(items, flag: str) -> list[tuple[str, str]]:
    from redmax.errors import SceneError

    out = []
    for item in items:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise SceneError(f"{flag} {item}: expected NAME=VALUE")
        out.append((key.strip(), value))
    return out


def _grid(scene: str, items) -> dict:
    """``--grid`` items as ``{key: [typed values]}``."""
    from redmax.errors import SceneError
    from redmax.sweeps.plan import value_from_text

    grid = {}
    for key, text in _pairs(items, "--grid"):
        if key in grid:
            raise SceneError(f"--grid {key}: given twice")
        words = text.split(",")
        if not text.strip() or any(not w.strip() for w in words):
            raise SceneError(f"--grid {key}={text}: expected comma-separated values, e.g. {key}=0,0.5,1")
        grid[key] = [value_from_text(scene, key, w, "--grid") for w in words]
    return grid


def run(a) -> int:
    """``redmax sweep``."""
    from redmax.errors import SceneError
    from redmax.sweeps import sweep
    from redmax.sweeps.plan import value_from_text

    if not a.grid:
        raise SceneError("sweep: give at least one --grid KEY=V1,V2,...")
    for flag, v in (("--dt", a.dt), ("--duration", a.duration)):
        if v is not None and not v > 0:
            raise SceneError(f"{flag} must be positive, got {v}")
    grid = _grid(a.scene, a.grid)
    fixed = {k: value_from_text(a.scene, k, v, "--param") for k, v in _pairs(a.param, "--param")}
    for key in ("duration", "dt", "integrator", "solver"):
        if getattr(a, key) is not None:
            fixed[key] = getattr(a, key)
    record = ("H", "final_state", "trajectory") if a.trajectory else ("H", "final_state")
    t0 = time.perf_counter()
    ds = sweep(a.scene, grid=grid, scheduler=a.scheduler, out=a.out, record=record, workers=a.workers, **fixed)
    if a.quiet:
        return 0
    n, done, failed = ds.attrs["runs_total"], ds.attrs["runs_done"], ds.attrs["runs_error"]
    print(f"{ds.attrs['scene']}: {n} runs ({done} run now, {n - done} from the store), {failed} failed, in "
          f"{time.perf_counter() - t0:.1f} s")
    if a.out:
        print(f"wrote sweep {a.out}")
    else:
        _table(ds)
    return 0


def _table(ds) -> None:
    """One line per run: its grid values, status and H (or its error)."""
    import numpy as np

    dims = list(ds["status"].dims)
    for index in np.ndindex(*ds["status"].shape):
        where = ", ".join(f"{d}={ds[d].values[i]}" for d, i in zip(dims, index, strict=True))
        status = str(ds["status"].values[index])
        what = f"H = {float(ds['H'].values[index]):.10g}" if status == "ok" and "H" in ds else \
            str(ds["error"].values[index])
        print(f"  {where}: {status}{': ' + what if what else ''}")


def plot(a) -> int:
    """``redmax plot STORE.zarr FILE.png``."""
    from redmax.errors import SceneError
    from redmax.sweeps.plot import plot_sweep

    if not a.file.lower().endswith((".png", ".pdf", ".svg", ".jpg")):
        raise SceneError(f"plot {a.file}: expected a file name ending in .png, .pdf, .svg or .jpg")
    select = dict(_pairs(a.sel, "--sel"))
    plot_sweep(a.scene, a.file, y=a.y, x=a.x, color=a.color, select=select)
    print(f"wrote plot {a.file}")
    return 0
