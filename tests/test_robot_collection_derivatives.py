"""Issue 14 over the whole robot collection: on every URDF of example-robot-data (and pybullet_data, when installed)
that Pinocchio and redmax both load, fixed and floating base, at a random state,

* ``rnea_derivatives`` and ``aba_derivatives`` (with ``Minv``) equal Pinocchio's ``computeRNEADerivatives`` and
  ``computeABADerivatives`` (free flyer in tangent rates, ``DofMap(..., tangent=True)``) to 1e-9 relative, or, for
  forward dynamics, to cond(M) * 1e-15 when that is larger (icub: cond(M) 1.2e9, the two libraries 2.5e-9 apart);
* ``rnea_second_order_derivatives`` and ``aba_second_order_derivatives`` equal the complex step of our first order
  (and of ``crba`` for dM/dq) in every DOF, to 1e-11 of the largest entry (forward dynamics: times cond(M)): in the
  model's coordinates and, with a free base, in tangent rates (along the body-twist direction of each DOF, the
  coordinates of Pinocchio's second-order tensors);
* with a fixed base, ``balafoutis_patel.inverse_dynamics`` gives RNEA's torques, IDSVA's partials and M to 1e-10;
  with a free base it declines, naming the joint.

Errors are relative to the largest entry, or, when that is larger, to the largest entry of M (for forward dynamics
times those of M^-1 and of the accelerations, when above 1): the scale of the terms that sum to the derivatives,
which sets the round-off of entries that nearly cancel (the rotors of iris spin about their axes of symmetry:
derivatives of 1e-20 in both libraries; the wheels of pybullet's racecar: 1e-7 N m against 4e-4 kg m^2).  Files
that redmax refuses are refused for a singular M (``test_robot_collection.py``)."""

import warnings

import numpy as np
import pinocchio as pin
import pytest

import redmax as rm
from derivative_models import lie_directions, tangent_map
from redmax.testing.pinocchio_bridge import DofMap
from redmax.testing.robot_sweep import pinocchio_model, pinocchio_singular
from redmax.testing.robots import all_urdfs

from tolerances import COND_REL, CS_STEP, IDENTITY_REL, PIN_REL, SO_MAX_REL

# (label, path, floating) of every file and base that Pinocchio loads (0.3 s)
CASES = [(lb, p, fl) for lb, p in all_urdfs() for fl in (False, True) if not isinstance(pinocchio_model(p, fl), str)]


def _err(a, b, floor):
    """max |a - b| relative to max(max |b|, floor)."""
    return float(np.max(np.abs(a - b), initial=0.0) / max(float(np.max(np.abs(b), initial=0.0)), floor))


def _sym(M):
    return np.triu(M) + np.triu(M, 1).T


def _cs(f, x, d):
    """Complex step of ``f`` (a tuple of arrays) along the direction d from x."""
    return [np.asarray(r).imag / CS_STEP for r in f(x + 1j * CS_STEP * d)]


def test_the_cases_are_there():
    """The sweep below cannot pass empty: example-robot-data (a test extra) gives more than 100 file-base pairs."""
    assert sum(lb.startswith("erd:") for lb, _, _ in CASES) > 100


@pytest.mark.parametrize("label,path,floating", CASES,
                         ids=[f"{lb}-{'floating' if fl else 'fixed'}" for lb, _, fl in CASES])
def test_first_and_second_order_on_every_file(label, path, floating):
    pm = pinocchio_model(path, floating)
    rng = np.random.default_rng(5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # RedmaxWarnings are checked in test_robot_files.py
        try:
            m = rm.load_urdf(path, floating_base=floating)
        except rm.ModelError as e:
            assert pinocchio_singular(pm, rng), f"{label}: refused, yet Pinocchio's M is regular: {e}"
            return
    n = m.ndof
    assert n == pm.nv, f"{label}: {n} DOFs here, {pm.nv} in Pinocchio"
    if n == 0:
        return
    q = 0.3 * rng.normal(size=n)
    qd, qdd, tau = rng.normal(size=(3, n))
    mp = DofMap(m, pm, tangent=True)
    pd = pm.createData()
    qp = mp.q_pin(q)
    M = mp.mat(_sym(pin.crba(pm, pd, qp)))
    cond = float(np.linalg.cond(M))
    fM = np.abs(M).max()
    aba_rel = max(PIN_REL, COND_REL * cond)

    # first order against Pinocchio (tangent rates: the free flyer's body twist)
    dq, dv, _ = pin.computeRNEADerivatives(pm, pd, qp, mp.vec(qd), mp.vec(qdd))
    ours = rm.rnea_derivatives(m, q, qd, qdd, tangent=True)
    assert _err(ours[0], mp.mat(dq), fM) < PIN_REL, label
    assert _err(ours[1], mp.mat(dv), fM) < PIN_REL, label
    aq, av, Minv = pin.computeABADerivatives(pm, pd, qp, mp.vec(qd), mp.vec(tau))
    ours = rm.aba_derivatives(m, q, qd, tau, tangent=True)
    Minv = mp.mat(_sym(Minv))
    qdd_max = float(np.abs(pin.aba(pm, pd, qp, mp.vec(qd), mp.vec(tau))).max())
    fA = fM * np.abs(Minv).max() * max(1.0, qdd_max)
    assert _err(ours[0], mp.mat(aq), fA) < aba_rel, label
    assert _err(ours[1], mp.mat(av), fA) < aba_rel, label
    assert _err(ours[2], Minv, 0.0) < aba_rel, label

    # Balafoutis-Patel's recursion (revolute and prismatic joints): torques and partials equal RNEA's, M and IDSVA's;
    # a free base is declined, naming its joint
    if floating:
        with pytest.raises(rm.ModelError, match="root_joint"):
            rm.balafoutis_patel.inverse_dynamics(m, q, qd, qdd)
    else:
        bp = rm.balafoutis_patel.inverse_dynamics(m, q, qd, qdd)
        ref = (rm.rnea(m, q, qd, qdd), *rm.rnea_derivatives(m, q, qd, qdd), rm.crba(m, q))
        for a, b in zip(bp, ref, strict=True):
            assert _err(a, b, fM) < IDENTITY_REL, label

    # second order against the complex step of the first order: the model's coordinates and, with a free base,
    # tangent rates (complex step along the body-twist direction T^-1 e_k of each DOF, as Pinocchio's tensors)
    for tg in (False, True) if floating else (False,):
        D = lie_directions(m, q, tg)

        def id_q(x, tg=tg):  # d tau/dq and M (in tangent rates: T^-T M T^-1)
            Ti = np.linalg.inv(tangent_map(m, x)[0]) if tg else np.eye(n)
            return rm.rnea_derivatives(m, x, qd, qdd, tangent=tg)[0], Ti.T @ rm.crba(m, x) @ Ti

        def id_v(x, tg=tg):
            return rm.rnea_derivatives(m, q, x, qdd, tangent=tg)

        def fd_q(x, tg=tg):
            return rm.aba_derivatives(m, x, qd, tau, tangent=tg)

        def fd_v(x, tg=tg):
            return rm.aba_derivatives(m, q, x, tau, tangent=tg)

        def fd_t(x, tg=tg):
            return rm.aba_derivatives(m, q, qd, x, tangent=tg)

        S = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=tg)
        A = rm.aba_second_order_derivatives(m, q, qd, tau, tangent=tg)
        cs = [np.empty((n, n, n)) for _ in range(8)]
        for k, e in enumerate(np.eye(n)):
            cs[0][:, :, k], cs[3][:, :, k] = _cs(id_q, q, D[:, k])
            cs[2][:, :, k], cs[1][:, :, k] = _cs(id_v, qd, e)
            cs[4][:, :, k] = _cs(fd_q, q, D[:, k])[0]
            cs[6][:, :, k], cs[5][:, :, k] = _cs(fd_v, qd, e)[:2]
            cs[7][:, :, k] = _cs(fd_t, tau, e)[0]
        names = ("d2tau_dq2", "d2tau_dqd2", "d2tau_dqdqd", "dM_dq", "d2qdd_dq2", "d2qdd_dqd2", "d2qdd_dqdqd",
                 "d2qdd_dqdtau")
        for i, (got, ref) in enumerate(zip((*S, *A), cs, strict=True)):
            tol, floor = (SO_MAX_REL, fM) if i < 4 else (SO_MAX_REL * max(cond, 1.0), fA)
            assert _err(got, ref, floor) < tol, f"{label}: {names[i]} (tangent={tg})"
