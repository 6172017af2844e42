"""A sweep on a local Dask cluster against the same runs serially in one process.

Usage: ``python benchmarks/sweep.py [--workers 2] [--rounds 3] [--duration 1.0]``.  32 runs of paper/chain (10
links with joint friction, h = 1e-2) over mu (8 values) x joint radius (4 values), each ``--duration`` simulated
seconds.  The cluster (``--workers`` processes, one thread each, as ``redmax.sweep`` starts it) is started and
warmed up (one run per worker: imports, cached kernels) before the clock starts; the serial runs are warmed up by
one run too.  Each way is timed ``--rounds`` times, alternating; the table gives the median and the range, and the
ratio of the medians (serial / sweep).  The sweep's values are checked to equal the serial ones bitwise.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import redmax as rm
from redmax.sweeps import sweep
from redmax.sweeps.worker import WORKER_ENV

GRID = {"mu": [0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55], "radius": [0.5, 1.0, 1.5, 2.0]}


def serial(duration: float) -> tuple[np.ndarray, np.ndarray]:
    """Every run of the grid in this process: H (8, 4) and q_final (8, 4, ndof)."""
    H, Q = [], []
    for mu in GRID["mu"]:
        for radius in GRID["radius"]:
            res = rm.scenes.load("paper/chain", mu=mu, radius=radius).simulate(duration=duration)
            H.append(res.H)
            Q.append(res.q[-1])
    return np.array(H).reshape(8, 4), np.array(Q).reshape(8, 4, -1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--duration", type=float, default=1.0)
    a = ap.parse_args(argv)
    from distributed import Client, LocalCluster

    rm.scenes.load("paper/chain").simulate(duration=0.05)  # warm up this process
    with LocalCluster(n_workers=a.workers, threads_per_worker=1, processes=True, dashboard_address=None,
                      scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}, env=WORKER_ENV) as cluster, \
            Client(cluster, set_as_default=False) as client:
        sweep("paper/chain", grid={"mu": [0.61 + 0.01 * k for k in range(a.workers)]}, client=client,
              duration=0.05)  # warm up every worker (other values: no result is reused)
        times = {"serial (one process)": [], f"sweep ({a.workers} workers)": []}
        for _ in range(a.rounds):
            t = time.perf_counter()
            H, Q = serial(a.duration)
            times["serial (one process)"].append(time.perf_counter() - t)
            t = time.perf_counter()
            ds = sweep("paper/chain", grid=GRID, client=client, duration=a.duration)
            times[f"sweep ({a.workers} workers)"].append(time.perf_counter() - t)
            client.run(lambda: None)  # the results of this round are released before the next
            assert np.array_equal(ds.H.values, H) and np.array_equal(ds.q_final.values, Q), "not bitwise equal"
    load = os.getloadavg()[0]
    print(f"redmax {rm.__version__}, paper/chain, 32 runs of {a.duration:g} s, {a.rounds} rounds (load average "
          f"{load:.2f} at the end): median wall time (range)")
    med = {}
    for name, v in times.items():
        v = np.array(v)
        med[name] = np.median(v)
        print(f"  {name:28s} {med[name]:7.2f} s  ({v.min():.2f}-{v.max():.2f})")
    s, p = med.values()
    print(f"  speed-up (serial / sweep)    {s / p:7.2f}x   (values bitwise equal)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
