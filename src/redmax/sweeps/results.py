"""A sweep's results: its variables in memory, filled run by run, as an ``xarray.Dataset``, and its Zarr store.

The store is the dataset itself (Zarr format 2, consolidated metadata; ``xarray.open_zarr`` reads it at any time),
written first with every run ``status == "pending"`` and then updated as runs finish (every
:data:`FLUSH_SECONDS` and at the end).  A run's values are written before its status, so a run whose status says
"ok" or "error" is complete: a later sweep into the same store runs only the runs still "pending".
"""

from __future__ import annotations

import os
import time

import numpy as np

from redmax.errors import SceneError

__all__ = ["FLUSH_SECONDS", "Results", "Store"]

FLUSH_SECONDS = 2.0  # the longest a finished run waits in memory before it is written to the store
_WHOLE_BYTES = 1 << 23  # variables up to this size are one chunk, rewritten whole; larger ones one chunk per run
_DONE = ("ok", "error")


class Results:
    """The variables of a sweep in memory.

    Attributes:
        plan: the :class:`redmax.sweeps.plan.Plan`.
        arrays: name -> (dims, array): ``status``, ``error`` (run dims, text), ``H`` (run dims), ``q_final``,
            ``qdot_final`` (run dims + (ndof,)), ``t`` (run dims + (N+1,)), ``q``, ``qdot`` (run dims + (N+1, ndof))
            as ``plan.record`` asks; NaN where a run failed or has not run.
        fresh: the run indices filled since the store was last written.
    """

    def __init__(self, plan):
        self.plan = plan
        run, nd = plan.dims, len(plan.dof_names)
        shape = plan.shape
        self.dof_index = {n: k for k, n in enumerate(plan.dof_names)}
        self.arrays = {"status": (run, np.full(shape, "pending", dtype=object)),
                       "error": (run, np.full(shape, "", dtype=object))}
        if "H" in plan.record:
            self.arrays["H"] = (run, np.full(shape, np.nan))
        if "final_state" in plan.record:
            for name in ("q_final", "qdot_final"):
                self.arrays[name] = ((*run, "dof"), np.full((*shape, nd), np.nan))
        if "trajectory" in plan.record:
            n = plan.samples
            self.arrays["t"] = ((*run, "time"), np.full((*shape, n), np.nan))
            for name in ("q", "qdot"):
                self.arrays[name] = ((*run, "time", "dof"), np.full((*shape, n, nd), np.nan))
        self.fresh = []

    @property
    def status(self) -> np.ndarray:
        return self.arrays["status"][1]

    def fill(self, index: tuple, rec: dict) -> None:
        """Store the record of the run at ``index`` (a dict of :func:`redmax.sweeps.worker.run_one`)."""
        if rec["status"] == "ok":
            problem = self._check(rec)
            if problem:
                rec = {"status": "error", "error": problem}
        if rec["status"] == "ok":
            cols = [self.dof_index[n] for n in rec["dof_names"]]
            for name, (dims, arr) in self.arrays.items():
                if name in rec and name not in ("status", "error"):
                    view = arr[index]
                    if "dof" in dims:
                        view[..., cols] = rec[name]
                    else:
                        arr[index] = rec[name]
        self.arrays["error"][1][index] = rec["error"]
        self.status[index] = rec["status"]
        self.fresh.append(index)

    def _check(self, rec: dict) -> str:
        missing = [n for n in rec["dof_names"] if n not in self.dof_index]
        if missing:
            return (f"the run's DOFs {', '.join(missing)} are not in the sweep's dof coordinate (its scene did not "
                    "load in the calling process)")
        if "t" in rec and rec["t"].shape[0] != self.plan.samples:
            return f"the run has {rec['t'].shape[0]} samples, the sweep's other runs {self.plan.samples}"
        return ""

    def dataset(self, attrs: dict | None = None):
        """The results as an ``xarray.Dataset`` (run dims, ``dof``, ``time``; case columns for ``cases=``)."""
        import xarray as xr

        plan = self.plan
        data = {name: (dims, arr) for name, (dims, arr) in self.arrays.items()}
        data.update({k: (("case",), v) for k, v in plan.case_columns.items()})
        coords = {**plan.coords, "dof": np.array(plan.dof_names, dtype=object)}
        return xr.Dataset(data, coords=coords, attrs={**plan.attrs, **(attrs or {})})

    def load(self, ds) -> int:
        """Take the finished runs of a stored dataset ``ds``; returns how many."""
        status = np.asarray(ds["status"].values).astype(object)
        done = np.isin(status, _DONE)
        for name, (_, arr) in self.arrays.items():
            stored = np.asarray(ds[name].values)
            arr[done] = stored.astype(object)[done] if arr.dtype == object else stored[done]
        return int(done.sum())


def _is_store(path: str) -> bool:
    return any(os.path.exists(os.path.join(path, f)) for f in (".zgroup", ".zmetadata", "zarr.json"))


def _format() -> dict:
    """Zarr format 2: the only one of Zarr 2, and readable by every Zarr and xarray version the ``dist`` extra
    allows (Zarr 3 writes format 3 unless told)."""
    import zarr

    return {"zarr_format": 2} if int(zarr.__version__.split(".")[0]) >= 3 else {}


class Store:
    """The Zarr store of a sweep (``out=``): created with every run pending, resumed when it holds the same sweep.

    Args:
        path: the store (a folder, conventionally ``*.zarr``).  results: the sweep's :class:`Results`.
    """

    def __init__(self, path, results: Results):
        self.path = os.fspath(path)
        self.results = results
        self.last = time.perf_counter()
        self.group = None
        self.resumed = 0
        plan = results.plan
        if os.path.exists(self.path):
            self._resume(plan)
        else:
            self._create()

    def _resume(self, plan) -> None:
        import xarray as xr

        if not (os.path.isdir(self.path) and _is_store(self.path)):
            raise SceneError(f"out: {self.path!r} exists and is not a Zarr store; choose another path")
        try:
            ds = xr.open_zarr(self.path)
        except Exception as e:  # a store cut short while it was created, or not xarray's
            raise SceneError(f"out: cannot read the store {self.path!r} ({type(e).__name__}: {e}); delete it to start "
                             "over") from None
        found = ds.attrs.get("sweep_id")
        if found != plan.sweep_id:
            what = f"a sweep of scene {ds.attrs.get('scene')!r}" if found else "no redmax sweep"
            raise SceneError(f"out: {self.path!r} holds {what} with other runs or settings (sweep_id {found}, this "
                             f"sweep {plan.sweep_id}); write to another path, or delete it to start over")
        try:
            self.resumed = self.results.load(ds)
        except (KeyError, ValueError, IndexError) as e:
            raise SceneError(f"out: the store {self.path!r} lacks what this sweep records ({type(e).__name__}: {e}); "
                             "delete it to start over") from None

    def _create(self) -> None:
        parent = os.path.dirname(os.path.abspath(self.path))
        if not os.path.isdir(parent):
            raise SceneError(f"out: {self.path!r}: folder {parent} does not exist")
        ds = self.results.dataset()
        enc = {}
        for name, (dims, arr) in self.results.arrays.items():
            if arr.dtype != object and (arr.nbytes > _WHOLE_BYTES or "time" in dims):
                run = len(self.results.plan.dims)
                enc[name] = {"chunks": (1,) * run + arr.shape[run:]}
        ds.to_zarr(self.path, mode="w-", consolidated=True, encoding=enc, **_format())

    def due(self) -> bool:
        """Whether the finished runs held in memory should be written now."""
        return time.perf_counter() - self.last >= FLUSH_SECONDS

    def flush(self) -> None:
        """Write the runs finished since the last write: their values first, then ``status`` and ``error``."""
        import zarr

        fresh, self.results.fresh = self.results.fresh, []
        self.last = time.perf_counter()
        if not fresh:
            return
        if self.group is None:
            self.group = zarr.open_group(self.path, mode="r+")
        g = self.group
        for name, (_, arr) in self.results.arrays.items():
            if name in ("status", "error"):
                continue
            if g[name].chunks == arr.shape:
                g[name][...] = arr
            else:
                for index in fresh:
                    g[name][index] = arr[index]
        g["error"][...] = self.results.arrays["error"][1]
        g["status"][...] = self.results.status

    def finish(self, attrs: dict) -> None:
        """Write what is left and the sweep's counts to the store's attributes (then re-consolidate them)."""
        import zarr

        self.flush()
        g = self.group if self.group is not None else zarr.open_group(self.path, mode="r+")
        g.attrs.update(attrs)
        zarr.consolidate_metadata(self.path)
