"""rm.rollout (issue 54): B trajectories in one call, bitwise the trajectories of rm.simulate whatever the thread
count, with controls in every shape, on unconstrained, constrained and spring models; failures reported."""

import numpy as np
import pytest

import redmax as rm
from redmax.model.inputs import Inputs, Schedule

STEPS, H = 40, 1e-2
SCENES = {"chain": "reference/05", "loop": "reference/04", "springs": "reference/23"}


def _schedule_inputs(model, rows):
    """The torques ``rows`` (steps, n) as a piecewise-constant input schedule: row k on [t_{k+1}, t_{k+2})."""
    t = np.arange(STEPS + 1) * H
    specs = []
    for i in range(model.nb):
        a, b = model.idx[i], model.idx[i + 1]
        specs.append(Schedule(t[1:], rows[:, a:b]) if b > a else None)
    return Inputs(model.name, model.joint_names, model.idx, specs)


def _serial(model, q0, qd0, rows, **options):
    st = model.initial_state()
    st.q, st.qd = q0, qd0
    inputs = None if rows is None else _schedule_inputs(model, rows)
    return rm.simulate(model, st, integrator="euler", dt=H, duration=STEPS * H, inputs=inputs, **options)


def _case(name, B, shape, seed=0):
    model = rm.scenes.load(SCENES[name]).model
    n = model.ndof
    rng = np.random.default_rng(seed + B)
    q0 = model.q0 + 0.05 * rng.standard_normal((B, n))
    qd0 = 0.1 * rng.standard_normal((B, n))
    C = {"3d": rng.standard_normal((B, STEPS, n)) * 100, "steps": rng.standard_normal((STEPS, n)) * 100,
         "held": rng.standard_normal((B, n)) * 100, None: None}[shape]
    return model, q0, qd0, C


def _rows(C, shape, b):
    if shape is None:
        return None
    return {"3d": lambda: C[b], "steps": lambda: C, "held": lambda: np.broadcast_to(C[b], (STEPS, C.shape[1]))}[shape]()


@pytest.mark.parametrize("name", list(SCENES))
@pytest.mark.parametrize("B, shape", [(1, "3d"), (7, "steps"), (7, "held"), (64, "3d"), (7, None)])
def test_rollouts_equal_serial_simulations_bitwise(name, B, shape):
    model, q0, qd0, C = _case(name, B, shape)
    options = {"baumgarte": 5.0} if name == "loop" else {}
    runs = {th: rm.rollout(model, q0, qd0, dt=H, steps=STEPS, controls=C, threads=th, record=RECORD, **options)
            for th in (1, 2)}
    for b in sorted({0, B // 2, B - 1}):
        s = _serial(model, q0[b], qd0[b], _rows(C, shape, b), **options)
        for r in runs.values():
            assert np.array_equal(r.q[b], s.q) and np.array_equal(r.qdot[b], s.qdot)
            for k, v in s.energy.items():
                assert np.array_equal(r.energy[k][b], v), k
            for k, v in s.reactions.items():
                assert np.array_equal(r.reactions[k][b], v), k
    assert np.array_equal(runs[1].q, runs[2].q)  # every trajectory, whatever the thread count
    assert runs[2].meta["failed"] == [] and runs[2].q.shape == (B, STEPS + 1, model.ndof)


RECORD = ("q", "qdot", "energy", "reactions")


def test_pcg_rollouts_equal_serial_simulations():
    model, q0, qd0, C = _case("springs", 5, "3d")
    r = rm.rollout(model, q0, qd0, dt=H, steps=STEPS, controls=C, threads=2, solver="pcg")
    assert r.meta["solver"] == "pcg"
    for b in range(5):
        s = _serial(model, q0[b], qd0[b], C[b], solver="pcg")
        assert np.array_equal(r.q[b], s.q)


def test_an_exploding_trajectory_is_reported_and_the_others_finish():
    model, q0, qd0, C = _case("chain", 6, "3d")
    C[3, 10:] = 1e308  # trajectory 3 blows up from step 10
    r = rm.rollout(model, q0, qd0, dt=H, steps=STEPS, controls=C, threads=2, record=("q", "qdot", "energy"))
    assert [f["index"] for f in r.meta["failed"]] == [3]
    f = r.meta["failed"][0]
    assert f["step"] >= 10 and f["t"] == pytest.approx(f["step"] * H) and f["quantity"]
    assert np.all(np.isnan(r.q[3, f["step"] + 1:])) and np.all(np.isfinite(r.q[3, :f["step"] + 1]))
    for b in (0, 5):
        assert np.array_equal(r.q[b], _serial(model, q0[b], qd0[b], C[b]).q)


def test_what_steps_from_python_is_refused_by_name():
    with pytest.raises(rm.SimulationError, match="inequality"):
        m = rm.scenes.load("reference/06").model
        rm.rollout(m, m.q0, dt=H, steps=5)
    with pytest.raises(rm.SimulationError, match="friction"):
        m = rm.scenes.load("reference/27").model
        rm.rollout(m, m.q0, dt=H, steps=5)
    b = rm.ModelBuilder("fem", (0, 0, -9.81))
    b.add_deformable(rm.deformables.FEM("cube", {"box": [1, 1, 1], "divisions": [1, 1, 1]}, young=1e4, poisson=0.3,
                                        density=1.0))
    m = b.build()
    with pytest.raises(rm.SimulationError, match="cube.elastic"):
        rm.rollout(m, m.q0, dt=H, steps=5)
    m = rm.scenes.load("reference/05").model
    with pytest.raises(rm.SimulationError, match="sparse"):
        rm.rollout(m, m.q0, dt=H, steps=5, solver="sparse")
    with pytest.raises(rm.SimulationError, match="integrator"):
        rm.rollout(m, m.q0, dt=H, steps=5, integrator="rk45")


@pytest.mark.parametrize("kw, match", [
    (dict(q0=np.zeros(2)), "q0 must have shape"),
    (dict(controls=np.zeros((4, 5, 3))), "controls must have shape"),
    (dict(steps=0), "steps"),
    (dict(threads=0), "threads"),
    (dict(record=("q", "speed")), "record"),
    (dict(qd0=np.full(3, np.nan)), "qd0 contains NaN"),
])
def test_bad_arguments_name_the_argument(kw, match):
    m = rm.scenes.load("reference/05").model
    args = dict(q0=m.q0, dt=H, steps=5) | kw
    q0 = args.pop("q0")
    with pytest.raises(rm.SimulationError, match=match):
        rm.rollout(m, q0, **args)
