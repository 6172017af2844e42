"""redmax.Simulator and the pure step functions: the same numbers as the compiled loop and as an independent dense
solve, state handling, errors, and the LAPACK path of large models (Cholesky and LU)."""

import numpy as np
import pytest

import redmax as rm
from redmax.errors import RedmaxError, SimulationError
from redmax.solvers._dense import LAPACK_MIN
from redmax.testing.benchmark_models import benchmark_chain

H = 1e-3


def _chain(n=8, springs=True):
    return benchmark_chain(n, springs)


@pytest.mark.parametrize("coriolis", ["explicit", "implicit"])
def test_simulator_steps_equal_simulate_and_euler_step(coriolis):
    model, st = _chain()
    k = 60
    res = rm.simulate(model, st, integrator="euler", dt=H, duration=k * H, coriolis=coriolis)
    sim = rm.Simulator(model, st, dt=H, coriolis=coriolis)
    s = st
    for i in range(k):
        sim.step()
        s = rm.euler_step(model, s, H, coriolis=coriolis)
        assert np.abs(sim.q - res.q[i + 1]).max() < 1e-13
        assert np.abs(sim.qd - res.qdot[i + 1]).max() < 1e-12
    assert np.abs(s.q - sim.state.q).max() < 1e-13 and abs(sim.t - k * H) < 1e-15
    E = sim.energy()
    assert abs(E["total"] - res.energy["total"][-1]) < 1e-10 * max(1.0, abs(E["total"]))


def test_step_with_torques_equals_euler_step_and_a_dense_solve():
    model, st = _chain()
    tau = np.linspace(-0.3, 0.4, model.ndof)
    sim = rm.Simulator(model, st, dt=H)
    sim.step(tau)
    s1 = rm.euler_step(model, st, H, tau)
    step = rm.linearized_step(model, st, H, tau)
    qd1 = np.linalg.solve(step.dense(), step.b)  # independent of the compiled solvers
    assert np.abs(sim.qd - qd1).max() < 1e-12 * max(1.0, np.abs(qd1).max())
    assert np.abs(s1.qd - qd1).max() < 1e-12 * max(1.0, np.abs(qd1).max())
    # torques change the answer (the argument is used)
    sim2 = rm.Simulator(model, st, dt=H)
    sim2.step()
    assert np.abs(sim2.qd - sim.qd).max() > 1e-6


def test_state_is_a_copy_reset_and_assignment():
    model, st = _chain()
    sim = rm.Simulator(model, st, dt=H)
    s0 = sim.state
    s0.q[:] = 99.0  # a copy: the simulator is unchanged
    assert np.abs(sim.q - st.q).max() == 0
    with pytest.raises(ValueError):
        sim.q[0] = 1.0  # read-only view
    for _ in range(5):
        sim.step()
    mid = sim.state
    for _ in range(5):
        sim.step()
    sim.state = mid
    assert sim.t == pytest.approx(5 * H) and np.abs(sim.q - mid.q).max() == 0
    sim.reset()
    assert sim.t == 0.0 and np.abs(sim.q - model.q0).max() == 0


def test_bad_input_is_named():
    model, st = _chain()
    sim = rm.Simulator(model, st, dt=H)
    with pytest.raises(SimulationError, match="tau must have shape"):
        sim.step(np.zeros(model.ndof + 1))
    with pytest.raises(RedmaxError):
        sim.state = rm.State(np.zeros(model.ndof + 2), np.zeros(model.ndof + 2))
    bad = np.zeros(model.ndof)
    bad[3] = np.nan
    with pytest.raises(SimulationError, match="non-finite|NaN|not finite"):
        sim.step(bad)
    with pytest.raises(RedmaxError):
        rm.Simulator(model, st, dt=-1.0)


@pytest.mark.parametrize("coriolis", ["explicit", "implicit"])
def test_large_models_take_lapack_and_agree_with_a_dense_solve(coriolis):
    """From LAPACK_MIN DOFs the step factorises with LAPACK (Cholesky for the symmetric reference step, LU for
    coriolis='implicit'); both equal NumPy's solve of the same system."""
    model, st = benchmark_chain(LAPACK_MIN + 5, springs=True)
    st = rm.State(st.q, np.linspace(-1.0, 1.0, model.ndof), 0.0, st.jstate)
    step = rm.linearized_step(model, st, H, coriolis=coriolis)
    assert step.symmetric == (coriolis == "explicit")
    qd1 = np.linalg.solve(step.dense(), step.b)
    with rm.Simulator(model, st, dt=H, coriolis=coriolis) as sim:
        sim.step()
        assert np.abs(sim.qd - qd1).max() < 1e-10 * np.abs(qd1).max()
    s1 = rm.euler_step(model, st, H, coriolis=coriolis)
    assert np.abs(s1.qd - qd1).max() < 1e-10 * np.abs(qd1).max()


@pytest.mark.parametrize("n", [7, LAPACK_MIN + 3])
def test_symmetric_indefinite_systems_fall_back_to_lu_on_the_original_matrix(n):
    """A symmetric matrix that is not positive definite (a symmetrised stiffness can make one): the failed Cholesky
    must leave A (diagonal included) intact for the LU fallback, in the loop and the LAPACK paths."""
    from redmax.solvers._dense import solve_stage

    rng = np.random.default_rng(n)
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    lam = np.concatenate(([-0.5, -0.2], np.linspace(0.3, 3.0, n - 2)))  # indefinite, |eigenvalues| >= 0.2
    A = Q @ np.diag(lam) @ Q.T
    A = 0.5 * (A + A.T)
    b = rng.normal(size=n)
    x = np.zeros(n)
    method, piv = solve_stage(A.copy(), b, x, True, np.zeros(n, dtype=np.int64))
    assert method == 1 and piv > 0
    assert np.abs(x - np.linalg.solve(A, b)).max() < 1e-10 * np.abs(x).max()


def test_simulator_with_a_loop_constraint_equals_the_compiled_loop():
    """The constraint views travel to the step as three flat buffers (``pack_views``); the step must give the
    compiled loop's numbers and write the reactions into the same memory Python reads."""
    s = rm.scenes.load("reference/04")
    m, k, h = s.model, 40, s.dt
    res = rm.simulate(m, integrator="euler", dt=h, duration=k * h)
    assert res.meta["compiled"]
    sim = rm.Simulator(m, dt=h)
    for i in range(k):
        sim.step()
        assert np.abs(sim.q - res.q[i + 1]).max() < 1e-13
        assert np.abs(sim.qd - res.qdot[i + 1]).max() < 1e-12
    # the reactions of the last step, read through the Python views of the packed buffers
    r = res.reactions["loop"][k]
    assert np.abs(sim._cv.react[:r.size] - r).max() < 1e-9 * np.abs(r).max() and np.abs(r).max() > 1.0


def test_packed_constraint_views_round_trip():
    from numba import njit

    from redmax.integrators._constrained import constraint_views, pack_views, unpack_views

    cv0 = constraint_views(rm.scenes.load("reference/04").model, 5.0)
    cv, CI, CF, CB = pack_views(cv0)

    @njit
    def fill(CI, CF, CB):  # every array field of the unpacked views, written through
        u = unpack_views(CI, CF, CB)
        u.G[:, :] = 7.0
        u.indep[:] = False
        u.rk[:] = 3
        return u.active, u.coupled, u.tdep, u.beta, u.G.shape, u.Ejb.shape, u.hdr.shape

    out = fill(CI, CF, CB)
    assert out == (cv0.active, cv0.coupled, cv0.tdep, cv0.beta, cv0.G.shape, cv0.Ejb.shape, cv0.hdr.shape)
    assert (cv.G == 7.0).all() and not cv.indep.any() and (cv.rk == 3).all()
    for name in ("hdr", "ci", "cf", "Ejb", "wo", "rmap", "tc", "viol_off"):  # the program survives the copy
        assert np.array_equal(getattr(cv, name), getattr(cv0, name)), name
