"""Parameter sweeps on Dask (redmax.sweeps): the dataset equals serial runs bitwise, failing runs are recorded, a
killed worker loses nothing, a store resumes, the command line writes a store and plots it; keys are checked before
anything runs."""

import os
import signal
import threading
import time

import distributed
import numpy as np
import pytest
import xarray as xr
import zarr

import redmax as rm
from redmax.errors import SceneError
from redmax.sweeps import sweep

CHAIN = "paper/chain"  # 10 links with joint friction: mu, radius (and n) are scene parameters


@pytest.fixture(scope="module")
def client():
    from redmax.sweeps.worker import WORKER_ENV

    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None,
                                  scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}, env=WORKER_ENV) as cluster, \
            distributed.Client(cluster, set_as_default=False) as c:
        yield c


def serial(name, params=None, offsets=(), **options):
    """The run a sweep makes, in this process."""
    scene = rm.scenes.load(name, **(params or {}))
    state = None
    if offsets:
        state = scene.model.initial_state()
        for kind, dof, value in offsets:
            (state.q if kind == "q0" else state.qd)[list(scene.model.dof_names).index(dof)] += value
    return scene, scene.simulate(state=state, **options)


def same(a, b) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and np.array_equal(a.view(np.uint64), b.view(np.uint64))


def test_grid_equals_serial_runs_bitwise(client):
    grid = {"mu": [0.0, 0.4], "radius": [0.5, 1.0]}
    ds = sweep(CHAIN, grid=grid, client=client, duration=0.3)
    assert ds.H.dims == ("mu", "radius") and ds.q_final.dims == ("mu", "radius", "dof")
    assert list(ds.mu.values) == [0.0, 0.4] and list(ds.radius.values) == [0.5, 1.0]
    assert ds.attrs["scene"] == CHAIN and ds.attrs["duration"] == 0.3 and ds.attrs["runs_done"] == 4
    for i, mu in enumerate(grid["mu"]):
        for j, radius in enumerate(grid["radius"]):
            scene, res = serial(CHAIN, {"mu": mu, "radius": radius}, duration=0.3)
            assert list(ds.dof.values) == list(scene.model.dof_names)
            assert ds.status.values[i, j] == "ok" and ds.error.values[i, j] == ""
            assert same(ds.H.values[i, j], res.H)
            assert same(ds.q_final.values[i, j], res.q[-1]) and same(ds.qdot_final.values[i, j], res.qdot[-1])


def test_a_failing_case_is_recorded_and_the_others_complete(client):
    cases = [{"radius": -1.0}, {"dt": -0.01}, {"mu": 0.2, "dt": 0.02}]
    ds = sweep(CHAIN, cases=cases, client=client, duration=0.2)
    assert list(ds.status.values) == ["error", "error", "ok"]
    with pytest.raises(SceneError) as bad_radius:
        rm.scenes.load(CHAIN, radius=-1.0)
    with pytest.raises(rm.SimulationError) as bad_dt:
        rm.scenes.load(CHAIN).simulate(dt=-0.01, duration=0.2)
    assert list(ds.error.values) == [str(bad_radius.value), str(bad_dt.value), ""]
    assert np.isnan(ds.H.values[0]) and np.all(np.isnan(ds.q_final.values[:2]))
    _, res = serial(CHAIN, {"mu": 0.2}, dt=0.02, duration=0.2)
    assert same(ds.H.values[2], res.H) and same(ds.q_final.values[2], res.q[-1])
    # the case keys are variables over case with the value each case ran with (the scene's default elsewhere; NaN
    # when the case's scene did not load)
    assert list(ds.radius.values) == [-1.0, 0.5, 0.5]
    np.testing.assert_array_equal(ds.dt.values, [np.nan, -0.01, 0.02])
    assert list(ds.mu.values) == [0.6, 0.6, 0.2] and ds.attrs["runs_error"] == 2


def test_a_killed_worker_loses_nothing(client):
    """Kill (SIGKILL) the first worker seen running a task; its tasks run again elsewhere and every value is still
    the serial one."""
    pids = client.run(os.getpid)
    killed = []

    def kill_first_busy():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not killed:
            busy = [w for w, keys in client.processing().items() if keys and w in pids]
            if busy:
                os.kill(pids[busy[0]], signal.SIGKILL)
                killed.append(pids[busy[0]])
            time.sleep(0.01)

    watcher = threading.Thread(target=kill_first_busy, daemon=True)
    watcher.start()
    grid = {"mu": [0.1, 0.3], "radius": [0.5, 2.0]}
    ds = sweep(CHAIN, grid=grid, client=client, duration=0.8)
    watcher.join()
    assert killed and killed[0] not in client.run(os.getpid).values()
    assert (ds.status.values == "ok").all()
    for i, mu in enumerate(grid["mu"]):
        for j, radius in enumerate(grid["radius"]):
            _, res = serial(CHAIN, {"mu": mu, "radius": radius}, duration=0.8)
            assert same(ds.H.values[i, j], res.H) and same(ds.qdot_final.values[i, j], res.qdot[-1])


def test_a_rerun_into_the_store_runs_only_what_is_missing(client, tmp_path):
    out = tmp_path / "sweep.zarr"
    grid = {"radius": [-1.0, 1.0], "mu": [0.0, 0.5]}  # radius -1 fails: finished runs, not rerun
    first = sweep(CHAIN, grid=grid, client=client, out=out, duration=0.1)
    assert first.attrs["runs_done"] == 4 and first.attrs["runs_error"] == 2
    stored = xr.open_zarr(out).load()
    assert stored.attrs["runs_done"] == 4 and list(stored.status.values.ravel()) == ["error"] * 2 + ["ok"] * 2
    assert same(stored.H, first.H) and same(stored.q_final, first.q_final)
    again = sweep(CHAIN, grid=grid, client=client, out=out, duration=0.1)
    assert again.attrs["runs_done"] == 0 and same(again.H, first.H) and same(again.qdot_final, first.qdot_final)
    assert list(again.error.values.ravel()) == list(first.error.values.ravel())
    g = zarr.open_group(str(out), mode="r+")  # as if the sweep had stopped before its last run
    status = g["status"][...]
    status[1, 1] = "pending"
    g["status"][...] = status
    resumed = sweep(CHAIN, grid=grid, client=client, out=out, duration=0.1)
    assert resumed.attrs["runs_done"] == 1 and same(resumed.H, first.H)
    with pytest.raises(SceneError, match="holds a sweep of scene 'paper/chain' with other runs"):
        sweep(CHAIN, grid=grid, client=client, out=out, duration=0.2)


def test_offsets_and_trajectories(client):
    grid = {"q0[joint1]": [0.0, 0.1], "qd0[joint2]": [0.0, -1.0]}
    ds = sweep("reference/05", grid=grid, client=client, duration=0.5, record=("H", "trajectory"))
    assert ds.q.dims == ("q0[joint1]", "qd0[joint2]", "time", "dof") and "q_final" not in ds
    _, res = serial("reference/05", offsets=(("q0", "joint1", 0.1), ("qd0", "joint2", -1.0)), duration=0.5)
    assert same(ds.t.values[1, 1], res.t) and same(ds.q.values[1, 1], res.q) and same(ds.qdot.values[1, 1], res.qdot)
    assert same(ds.H.values[1, 1], res.H)
    with pytest.raises(SceneError, match="same number of samples"):
        sweep("reference/05", cases=[{"duration": 0.5}, {"duration": 1.0}], client=client, record="trajectory")


def test_keys_and_arguments_are_checked_before_anything_runs():
    """No cluster is started for these: each raises while the sweep is planned."""
    with pytest.raises(SceneError, match="unknown key 'bogus'"):
        sweep(CHAIN, grid={"mu": [0.1], "bogus": [1, 2]})
    with pytest.raises(SceneError, match="has no DOF 'nope'"):
        sweep(CHAIN, cases=[{"q0[nope]": 0.1}])
    with pytest.raises(SceneError, match="parameter 'n' expects int"):
        sweep(CHAIN, grid={"n": [2, 2.5]})
    with pytest.raises(SceneError, match="exactly one of grid"):
        sweep(CHAIN, grid={"mu": [0.1]}, cases=[{"mu": 0.2}])
    with pytest.raises(SceneError, match="also given as a keyword"):
        sweep(CHAIN, grid={"mu": [0.1]}, mu=0.2)
    with pytest.raises(SceneError, match="workers must be a positive integer"):
        sweep(CHAIN, grid={"mu": [0.1]}, workers=0)
    with pytest.raises(SceneError, match="record: unknown item 'energy'"):
        sweep(CHAIN, grid={"mu": [0.1]}, record=("H", "energy"))
    with pytest.raises(SceneError, match="unknown scene 'no/such'"):
        sweep("no/such", grid={"mu": [0.1]})
    changed = rm.scenes.load(CHAIN, n=3)
    changed.dt = 0.02
    with pytest.raises(SceneError, match=r"differs from the built-in one \(dt\)"):
        sweep(changed, grid={"mu": [0.1]})


def _threads():
    import numba
    from threadpoolctl import threadpool_info

    return numba.get_num_threads(), rm.get_num_threads(), sorted((d["filepath"], d["num_threads"])
                                                                 for d in threadpool_info())


def test_a_local_cluster_is_started_and_closed_and_the_environment_left_as_it_was():
    threads = _threads()  # (first: importing threadpoolctl sets KMP_DUPLICATE_LIB_OK)
    before = dict(os.environ)
    ds = sweep(rm.scenes.load(CHAIN, n=3), grid={"mu": [0.0, 0.3]}, workers=2, duration=0.2)
    assert dict(os.environ) == before and _threads() == threads
    assert not _has_default_client()  # the sweep's client was never made the default
    assert ds.attrs["n"] == 3 and (ds.status.values == "ok").all()
    _, res = serial(CHAIN, {"n": 3, "mu": 0.3}, duration=0.2)
    assert same(ds.H.values[1], res.H) and same(ds.q_final.values[1], res.q[-1])


def _has_default_client() -> bool:
    try:
        distributed.default_client()
    except ValueError:
        return False
    return True


def test_the_command_line_writes_a_store_and_plots_it(client, tmp_path, capsys):
    from PIL import Image

    from redmax.cli import main

    out, png, line = tmp_path / "sweep.zarr", tmp_path / "heat.png", tmp_path / "line.png"
    args = ["sweep", CHAIN, "--grid", "mu=0,0.4", "--grid", "n=2,3", "--duration", "0.1", "--out", str(out),
            "--scheduler", client.scheduler.address]
    assert main(args) == 0
    assert "4 runs (4 run now, 0 from the store), 0 failed" in capsys.readouterr().out
    ds = xr.open_zarr(out)
    assert ds.H.dims == ("mu", "n") and list(ds.n.values) == [2, 3] and ds.n.dtype == np.int64
    _, res = serial(CHAIN, {"mu": 0.4, "n": 3}, duration=0.1)
    assert same(ds.H.values[1, 1], res.H)
    assert main(["plot", str(out), str(png), "--x", "mu", "--y", "H"]) == 0
    assert main(["plot", str(out), str(line), "--x", "mu", "--y", "q_final[joint1]", "--sel", "n=3"]) == 0
    assert Image.open(png).size[0] > 100 and Image.open(line).size[0] > 100
    capsys.readouterr()
    assert main(["sweep", CHAIN, "--grid", "bogus=1,2"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("redmax: error: --grid: unknown key 'bogus'") and "\n" not in err
    assert main(["plot", str(out), str(png), "--y", "q_final"]) == 2
    assert "pick one as q_final[<dof>]" in capsys.readouterr().err
