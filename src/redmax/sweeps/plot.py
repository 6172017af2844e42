"""Figures of a sweep: a variable over one run dimension (a line) or two (a heat map), from a dataset or a store.

Matplotlib (the ``viz`` extra) draws on a Figure with its own Agg canvas: no pyplot, no global backend.
"""

from __future__ import annotations

import os
import re

import numpy as np

from redmax.errors import RedmaxError, SceneError

__all__ = ["open_store", "plot_sweep"]

_PICK = re.compile(r"^(\w+)\[(.+)\]$")  # "q_final[joint2]": one DOF of a variable over dof


def open_store(path):
    """The dataset of a sweep's Zarr store (SceneError naming the path when it is not one)."""
    import xarray as xr

    path = os.fspath(path)
    if not os.path.isdir(path):
        raise SceneError(f"{path}: no sweep store there")
    try:
        return xr.open_zarr(path)
    except Exception as e:  # any reader error: not a store xarray can read
        raise SceneError(f"{path}: not a readable Zarr store ({type(e).__name__}: {e})") from None


def _variable(ds, y: str):
    """Variable ``y`` (``name`` or ``name[dof]``) without its ``dof`` dimension."""
    m = _PICK.match(y)
    name, dof = (m.group(1), m.group(2)) if m else (y, None)
    if name not in ds.data_vars:
        raise SceneError(f"--y {y}: the sweep has no variable {name!r}; it has {', '.join(map(str, ds.data_vars))}")
    da = ds[name]
    if "time" in da.dims:
        raise SceneError(f"--y {y}: {name} is a trajectory over time; plot a sweep variable such as H or "
                         "q_final[<dof>]")
    if "dof" in da.dims:
        dofs = [str(d) for d in ds["dof"].values]
        if dof is None or dof not in dofs:
            raise SceneError(f"--y {y}: {name} is over dof: pick one as {name}[<dof>], one of {', '.join(dofs)}")
        da = da.isel(dof=dofs.index(dof))
    elif dof is not None:
        raise SceneError(f"--y {y}: {name} has no dof dimension")
    if da.dtype.kind not in "fiub":
        raise SceneError(f"--y {y}: {name} holds text, not numbers")
    return da.load()


def _select(da, select: dict):
    """Fix the run dimensions of ``select`` (values compared as text when they are not numbers)."""
    for dim, value in (select or {}).items():
        if dim not in da.dims:
            raise SceneError(f"--sel {dim}: no dimension {dim!r}; the sweep's: {', '.join(map(str, da.dims))}")
        coord = da[dim].values
        if coord.dtype.kind in "fiu":
            try:
                k = int(np.argmin(np.abs(coord - float(value))))
            except (TypeError, ValueError):
                raise SceneError(f"--sel {dim}={value}: {dim} takes numbers") from None
        else:
            texts = [str(c) for c in coord]
            if str(value) not in texts:
                raise SceneError(f"--sel {dim}={value}: not a value of {dim} ({', '.join(texts)})")
            k = texts.index(str(value))
        da = da.isel({dim: k})
    return da


def _ticks(ax, axis: str, coord, n: int) -> np.ndarray:
    """Positions of a coordinate on an axis: its values when numeric, else 0..n-1 labelled with them."""
    if coord.dtype.kind in "fiu" and np.all(np.isfinite(coord.astype(float))):
        return coord.astype(float)
    pos = np.arange(n, dtype=float)
    getattr(ax, f"set_{axis}ticks")(pos)
    getattr(ax, f"set_{axis}ticklabels")([str(c) for c in coord])
    return pos


def _edges(pos: np.ndarray) -> np.ndarray:
    """Cell edges around sorted or unsorted centres (a heat map's cells)."""
    if pos.size == 1:
        return np.array([pos[0] - 0.5, pos[0] + 0.5])
    mid = 0.5 * (pos[1:] + pos[:-1])
    return np.concatenate([[pos[0] - (mid[0] - pos[0])], mid, [pos[-1] + (pos[-1] - mid[-1])]])


def plot_sweep(data, path, y: str = "H", x: str | None = None, color: str | None = None,
               select: dict | None = None, title: str | None = None) -> str:
    """Plot a sweep variable over one run dimension (a line) or two (a heat map) and save it.

    Args:
        data: a sweep's ``xarray.Dataset`` or the path of its Zarr store.
        path: the figure (.png, .pdf, .svg, .jpg).
        y: the variable: "H", or ``"q_final[<dof>]"`` / ``"qdot_final[<dof>]"`` for one DOF.
        x: the horizontal dimension (default: the first left); for ``cases=`` sweeps a case variable (a scatter of
            y against it) or "case".
        color: the second dimension of a heat map (vertical; default: the other one left).
        select: ``{dim: value}`` fixing further dimensions (the nearest value of a numeric coordinate).
        title: default: the scene and the variable.

    Returns:
        ``path``.  Failed runs are gaps (NaN); the title counts them.
    """
    ds = open_store(data) if isinstance(data, str | os.PathLike) else data
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise RedmaxError(f"plots need matplotlib ({exc}); install it with pip install 'redmax[plot]'") from None
    da = _select(_variable(ds, y), select)
    dims = list(da.dims)
    failed = int(np.sum(np.asarray(ds["status"].values).astype(object) == "error")) if "status" in ds else 0
    fig = Figure(figsize=(6.4, 4.4), dpi=110)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    label = y
    if dims == ["case"] and x is not None and x != "case":
        if x not in ds.data_vars or ds[x].dims != ("case",):
            raise SceneError(f"--x {x}: not a case variable; the sweep's: {', '.join(map(str, ds.data_vars))}")
        xs = _ticks(ax, "x", np.asarray(ds[x].values), da.size)
        order = np.argsort(xs, kind="stable")
        ax.plot(xs[order], da.values[order], "o-")
        ax.set_xlabel(x)
        ax.set_ylabel(label)
    elif len(dims) == 1:
        if x is not None and x != dims[0]:
            raise SceneError(f"--x {x}: the variable is over {dims[0]} only (fix the others with --sel)")
        xs = _ticks(ax, "x", np.asarray(da[dims[0]].values), da.size)
        ax.plot(xs, da.values, "o-")
        ax.set_xlabel(dims[0])
        ax.set_ylabel(label)
    elif len(dims) == 2:
        xd = x or (dims[1] if color == dims[0] else dims[0])
        cd = color or next(d for d in dims if d != xd)
        for flag, d in (("--x", xd), ("--color", cd)):
            if d not in dims:
                raise SceneError(f"{flag} {d}: not a dimension of {y} ({', '.join(dims)})")
        if xd == cd:
            raise SceneError(f"--x and --color name the same dimension {xd!r}")
        da = da.transpose(cd, xd)
        xs = _ticks(ax, "x", np.asarray(da[xd].values), da.shape[1])
        cs = _ticks(ax, "y", np.asarray(da[cd].values), da.shape[0])
        ox, oc = np.argsort(xs, kind="stable"), np.argsort(cs, kind="stable")
        mesh = ax.pcolormesh(_edges(xs[ox]), _edges(cs[oc]), np.ma.masked_invalid(da.values[np.ix_(oc, ox)]),
                             shading="flat")
        fig.colorbar(mesh, ax=ax, label=label)
        ax.set_xlabel(xd)
        ax.set_ylabel(cd)
    else:
        raise SceneError(f"{y} is over {len(dims)} dimensions ({', '.join(dims)}): plot one (--x) or two (--x and "
                         "--color) and fix the others with --sel NAME=VALUE")
    scene = str(ds.attrs.get("scene", "sweep"))
    scene = os.path.basename(scene) if os.path.isabs(scene) else scene
    fixed = ", ".join(f"{d} = {v}" for d, v in (select or {}).items())
    note = (f", {fixed}" if fixed else "") + (f" ({failed} failed run{'s' * (failed != 1)})" if failed else "")
    ax.set_title(title or f"{scene}: {y}{note}")
    fig.tight_layout()
    fig.savefig(path)
    return path
