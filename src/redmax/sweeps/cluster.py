"""The Dask side of a sweep: the client (a local cluster started and closed here, or a cluster the caller runs), the
tasks, and a progress bar.

A local cluster is one worker process per core with one thread each (:data:`redmax.sweeps.worker.WORKER_ENV` in
the workers' environment), without dashboard (its scheduler's HTTP server on a free port of 127.0.0.1).  Its
scheduler and nannies run in the calling process, and a nanny sets a few variables of the process's environment
before it spawns a worker (Dask's ``distributed.nanny.pre-spawn-environ``: ``OMP_NUM_THREADS``,
``MALLOC_TRIM_THRESHOLD_``, ...); they are put back as they were when the cluster closes.  The client never
becomes Dask's default scheduler (``set_as_default=False``).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

from redmax.errors import RedmaxError, SceneError, SimulationError
from redmax.sweeps.worker import WORKER_ENV, run_one

__all__ = ["Progress", "connect", "distributed", "execute"]

_DASK_SETS = ("PYTHONHASHSEED", "__DASK_PARENT_PID")  # set in this process by a nanny besides the pre-spawn ones


def distributed():
    """The ``distributed`` module; RedmaxError naming the extra to install when it is missing."""
    try:
        import distributed as dist
        import xarray  # noqa: F401
        import zarr  # noqa: F401
    except ImportError as exc:
        raise RedmaxError(f"sweeps need Dask distributed, xarray and Zarr ({exc}); install them with "
                          "pip install 'redmax[dist]'") from None
    return dist


def check_connection(client, scheduler, workers) -> None:
    """The connection arguments, checked before anything starts (SceneError naming the offending one)."""
    if client is not None and scheduler is not None:
        raise SceneError("sweep: give client= or scheduler=, not both")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise SceneError(f"workers must be a positive integer, got {workers!r}")
    if scheduler is not None and not (isinstance(scheduler, str) and scheduler.strip()):
        raise SceneError(f"scheduler must be an address such as 'tcp://host:8786', got {scheduler!r}")
    if client is not None:
        dist = distributed()
        if not isinstance(client, dist.Client):
            raise SceneError(f"client must be a dask.distributed.Client, got {type(client).__name__}")


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@contextlib.contextmanager
def connect(client=None, scheduler=None, workers=None):
    """A Client: ``client`` itself; or connected to ``scheduler`` (closed at the end, the cluster left running); or
    of a local cluster of ``workers`` processes (default: the cores) started here and closed at the end.  With a
    client or a scheduler, ``workers`` is how many workers to wait for (default 1)."""
    dist = distributed()
    if client is not None:
        client.wait_for_workers(workers or 1)
        yield client
        return
    if scheduler is not None:
        try:
            c = dist.Client(scheduler, set_as_default=False)
        except (OSError, TimeoutError) as e:
            raise SceneError(f"scheduler: cannot connect to {scheduler!r}: {e}") from None
        try:
            c.wait_for_workers(workers or 1)
            yield c
        finally:
            c.close()
        return
    import dask

    if getattr(sys.modules.get("__main__"), "__name__", "") == "__mp_main__":
        raise RedmaxError("sweep: called while a worker process imports the main script: in a script, call it under "
                          "`if __name__ == \"__main__\":` (the workers of a local cluster are new processes that "
                          "import the script)")
    touched = {*dask.config.get("distributed.nanny.pre-spawn-environ", {}), *WORKER_ENV, *_DASK_SETS}
    saved = {k: os.environ.get(k) for k in touched}
    try:
        with _local_cluster(dist, workers or cores()) as cluster, dist.Client(cluster, set_as_default=False) as c:
            yield c
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _local_cluster(dist, n: int):
    """A LocalCluster of ``n`` one-thread worker processes; SimulationError with the likely cause when its workers
    do not start."""
    try:
        return dist.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                                 scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}, env=dict(WORKER_ENV))
    except RuntimeError as e:
        raise SimulationError(f"sweep: the local cluster's workers did not start ({e}); in a script, call the sweep "
                              "under `if __name__ == \"__main__\":` (the workers are new processes that import the "
                              "script)") from e


class Progress:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal.

    Args:
        total: runs to do.  enabled: draw it (default: ``sys.stderr.isatty()``).
    """

    def __init__(self, total: int, enabled: bool | None = None):
        self.total = total
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        self.last = 0.0
        self.shown = False

    def update(self, done: int, errors: int) -> None:
        if not self.enabled:
            return
        now = time.perf_counter()
        if done < self.total and now - self.last < 0.1:
            return
        self.last, self.shown = now, True
        n = 30 * done // max(self.total, 1)
        failed = f", {errors} failed" if errors else ""
        sys.stderr.write(f"\rsweep [{'#' * n}{'.' * (30 - n)}] {done}/{self.total} runs{failed}")
        sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()


def _outcome(dist, future) -> dict:
    """The record of a finished future; a run that killed its workers is a failed run, any other failure of the
    cluster stops the sweep."""
    try:
        return future.result()
    except dist.KilledWorker as e:
        return {"status": "error", "error": f"the workers running it died (Dask gave up after repeated "
                                            f"worker deaths: {e})"}
    except Exception as e:
        raise SimulationError(f"sweep: a task failed outside its simulation ({type(e).__name__}: {e}); are redmax "
                              "and its dependencies installed on every worker?") from e


def execute(client, plan, runs, results, store=None) -> int:
    """Submit ``runs`` and fill ``results`` (and ``store``) as they finish; returns how many runs were filled.

    Each run is a pure task keyed by a token of its arguments (identical runs are computed once; a task of a worker
    that died is run again by the scheduler); the tasks left are cancelled if this stops early (an error, Ctrl-C).
    """
    import dask.base

    dist = distributed()
    tasks, where = {}, {}
    for run in runs:
        task = run.task(plan.source, plan.record)
        key = f"redmax-sweep-{dask.base.tokenize(task)}"
        tasks.setdefault(key, task)
        where.setdefault(key, []).append(run.index)
    keys = list(tasks)
    futures = client.map(run_one, *zip(*(tasks[k] for k in keys), strict=True), key=keys, pure=True)
    bar = Progress(len(runs))
    done = errors = 0
    pending = set(futures)
    try:
        for future in dist.as_completed(list(pending), loop=client.loop):
            rec = _outcome(dist, future)
            for index in where[future.key]:
                results.fill(index, rec)
                done += 1
                errors += results.status[index] == "error"
            pending.discard(future)
            future.release()
            bar.update(done, errors)
            if store is not None and store.due():
                store.flush()
    finally:
        bar.close()
        if pending:
            client.cancel(list(pending))
        if store is not None:
            store.flush()
    return done
