"""The linearly implicit Euler step against an independent implementation of the same schemes: MuJoCo.

On the benchmark chain without joint stiffness (MuJoCo treats joint stiffness explicitly, RedMax implicitly) the
two schemes are the same equations:

- RedMax's reference scheme (gravity and quadratic velocity terms explicit, joint damping implicit) is MuJoCo's
  ``implicitfast`` (with diagonal joint damping its symmetrised velocity derivative is exact):
  ``(M + h D) qd+ = M qd + h (tau_g - c(q, qd) - D qd) + h D qd``;
- ``coriolis="implicit"`` is MuJoCo's ``implicit``: the matrix also gains ``-h dc/dqd`` (Paper Eq. 3 with the
  Coriolis derivative of Featherstone's RNE, as in MuJoCo's ``mjd_rne_vel``);

and both update ``q+ = q + h qd+``.  Trajectories therefore agree to round-off over a short horizon (measured:
1.4e-13 in q, 1.1e-12 in qd relative, 12 links, 0.5 s), and on the
undamped 50-link chain both blow up at the same time (benchmarks/step.py section 4).
"""

import numpy as np
import pytest

import redmax as rm
from redmax.testing.benchmark_models import benchmark_chain, benchmark_chain_mjcf, benchmark_q0

mujoco = pytest.importorskip("mujoco")

H = 1e-3
STEPS = 500


def _mujoco_trajectory(n, integrator):
    xml = benchmark_chain_mjcf(n, springs=False, integrator=integrator, dt=H).replace('stiffness="1"', 'stiffness="0"')
    m = mujoco.MjModel.from_xml_string(xml)
    d = mujoco.MjData(m)
    d.qpos[:] = benchmark_q0(n)
    q = [d.qpos.copy()]
    qd = [d.qvel.copy()]
    for _ in range(STEPS):
        mujoco.mj_step(m, d)
        q.append(d.qpos.copy())
        qd.append(d.qvel.copy())
    return np.array(q), np.array(qd)


@pytest.mark.parametrize("coriolis, integrator", [("explicit", "implicitfast"), ("implicit", "implicit")])
@pytest.mark.parametrize("n", [3, 12])
def test_euler_step_matches_mujoco(n, coriolis, integrator):
    model, state = benchmark_chain(n, springs=False, damping=0.1, stiffness=0.0)
    r = rm.simulate(model, state, integrator="euler", dt=H, duration=STEPS * H, coriolis=coriolis)
    q_mj, qd_mj = _mujoco_trajectory(n, integrator)
    assert r.q.shape == q_mj.shape
    scale_q = np.abs(q_mj).max()
    scale_qd = np.abs(qd_mj).max()
    assert scale_qd > 1.0  # the chain really moves
    err_q = np.abs(r.q - q_mj).max() / scale_q
    err_qd = np.abs(r.qdot - qd_mj).max() / scale_qd
    assert err_q < 1e-11 and err_qd < 1e-11, (err_q, err_qd)


def test_the_two_schemes_differ_on_that_chain():
    """The comparison above can fail: the two MuJoCo schemes differ by far more than its tolerance."""
    q_fast, _ = _mujoco_trajectory(12, "implicitfast")
    q_impl, _ = _mujoco_trajectory(12, "implicit")
    assert np.abs(q_fast - q_impl).max() / np.abs(q_impl).max() > 1e-6
