"""Parameter sweeps on Dask: many runs of one scene, each with other parameters, step or initial state, on the
cores of this machine or on a cluster, gathered in one ``xarray.Dataset`` (and a Zarr store that resumes).

    import redmax as rm
    ds = rm.sweep("paper/chain", grid={"mu": [0.0, 0.3, 0.6], "radius": [0.5, 1.0]}, duration=1.0)
    ds.H.sel(radius=0.5)                       # H over mu

Needs the ``dist`` extra (``pip install 'redmax[dist]'``: Dask distributed, xarray, Zarr).  The guide is
``docs/sweeps.md``; the pieces: :mod:`redmax.sweeps.plan` (keys, runs, layout), :mod:`redmax.sweeps.worker`
(one run), :mod:`redmax.sweeps.cluster` (Dask), :mod:`redmax.sweeps.results` (dataset and store),
:mod:`redmax.sweeps.plot` (figures).
"""

from __future__ import annotations

from redmax.sweeps.plot import plot_sweep

__all__ = ["plot_sweep", "sweep"]


def sweep(scene, grid=None, cases=None, *, client=None, scheduler=None, out=None, record=("H", "final_state"),
          workers=None, **simulate_options):
    """Run a scene over a grid of settings, or a list of cases, on Dask; return the results as an
    ``xarray.Dataset``.

    Every run is ``redmax.scenes.load(scene, **params).simulate(**options)`` in a worker process, bitwise the same as
    that call in one process.  A key of ``grid``, of a case or of ``simulate_options`` is a scene parameter
    (``redmax.scenes.parameters(scene)``), a keyword of :meth:`redmax.scenes.Scene.simulate` (``dt``, ``duration``,
    ``integrator``, ``solver``, ``baumgarte``, ...) or an initial-state offset ``"q0[<dof>]"`` / ``"qd0[<dof>]"``
    (added to the coordinate or rate of that DOF of ``model.initial_state()``, which is then passed as ``state=``).

    Args:
        scene: a scene name (built-in or parametric, e.g. "paper/chain") or scene-file path, which every worker
            loads; or a built-in :class:`redmax.scenes.Scene` as loaded (its parameters are kept).
        grid: ``{key: [values]}``: one run per element of the Cartesian product, one dataset dimension per key in
            order (coordinates: the values).
        cases: ``[{key: value}, ...]``: one run per dict along dimension ``case``; each key is also a variable over
            ``case`` holding the value every case ran with.  Exactly one of ``grid`` and ``cases``.
        client: a ``dask.distributed.Client`` to run on (left open); its workers should run one thread each
            (``dask worker ... --nthreads 1``).
        scheduler: the address of a Dask scheduler (``"tcp://host:8786"``) to connect to instead.  Without client
            and scheduler, a local cluster of ``workers`` processes (default: the cores), one thread each, is
            started and closed by the call.
        out: a Zarr store (a folder, e.g. "sweep.zarr") written as runs finish; a sweep into a store that holds
            the same sweep runs only the runs not yet finished (a failed run is finished); a store of another
            sweep raises SceneError.
        record: what to keep of each run: some of "H" (the energy change ``T(end) + V(end) - V(0)``),
            "final_state" (``q_final``, ``qdot_final`` over ``dof``), "trajectory" (``t`` (s), ``q``, ``qdot`` over
            ``time``: every run must have the same number of samples, duration / dt).
        workers: worker processes of the local cluster; with client or scheduler, the workers to wait for.
        **simulate_options: keys common to every run (simulate options, and scene parameters too).

    Returns:
        An ``xarray.Dataset`` over the run dimensions (the grid keys, or ``case``): ``status`` ("ok" or "error"),
        ``error`` (the message; "" when ok) and what ``record`` asks for (NaN where a run failed); attributes:
        ``scene``, ``record``, the common settings, ``sweep_id``, ``runs_total``, ``runs_done`` (the runs this call
        ran), ``runs_error`` and ``redmax_version``.

    Raises:
        SceneError: before anything runs, for an unknown key (naming it), a bad value of a scene parameter, a scene
            the workers cannot load by name, trajectories of different lengths, or an ``out`` of another sweep.
    """
    from redmax.sweeps.cluster import check_connection, connect, distributed, execute
    from redmax.sweeps.plan import make_plan
    from redmax.sweeps.results import Results, Store

    check_connection(client, scheduler, workers)
    distributed()
    plan = make_plan(scene, grid, cases, simulate_options, record)
    results = Results(plan)
    store = None if out is None else Store(out, results)
    todo = [run for run in plan.runs if results.status[run.index] == "pending"]
    done = 0
    if todo:
        with connect(client, scheduler, workers) as c:
            done = execute(c, plan, todo, results, store)
    attrs = {"runs_total": len(plan.runs), "runs_done": done,
             "runs_error": int((results.status == "error").sum())}
    if store is not None:
        store.finish(attrs)
    return results.dataset(attrs)
