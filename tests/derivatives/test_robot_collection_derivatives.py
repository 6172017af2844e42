"""Issue 14 over the whole robot collection: on every URDF of example-robot-data (and pybullet_data, when installed)
that Pinocchio loads with at least one DOF, fixed and floating base, at a random state,

* ``rnea_derivatives`` and ``aba_derivatives`` (with ``Minv``) equal Pinocchio's ``computeRNEADerivatives`` and
  ``computeABADerivatives`` (free flyer in tangent rates, ``DofMap(..., tangent=True)``) to 1e-9 relative, or, for
  forward dynamics, to cond(M) * 1e-15 when that is larger (icub: cond(M) 1.2e9, the two libraries 2.5e-9 apart),
  and the forward-dynamics derivatives times M (the torques they stand for, free of cond(M)) to 1e-9;
* ``rnea_second_order_derivatives`` equals the complex step of our first order (and of ``crba`` for dM/dq) in every
  DOF to 1e-11 of the largest entry, and ``aba_second_order_derivatives`` that of our ``aba_derivatives``, as is
  and times M, to 1e-11 or cond(M) * 1e-14 (the double pendulum on a free base, cond(M) 5e4: 8.5e-11): in the
  model's coordinates and, with a free base, in tangent rates (along the body-twist direction of each DOF);
* with a fixed base, ``balafoutis_patel.inverse_dynamics`` gives RNEA's torques, IDSVA's partials and M to 1e-10;
  with a free base it declines, naming the joint.

A file that redmax refuses must be refused for a singular M, naming a joint (as in ``test_robot_collection.py``).
Sensitivity, measured (stop 44): an error of 1e-8 of a tensor's largest entry, added at its largest entry or at one
of its 90th percentile, is caught in 227 of 240 such probes on talos, panda, solo12, ur5 and tiago, fixed and free
base (all of the first order); the misses are forward-dynamics second order on tiago (cond(M) 3.5e5) and the tau
derivative on free bases; on icub (cond(M) 1e8-1e9) 33 of 48."""

import warnings

import numpy as np
import pinocchio as pin
import pytest

import redmax as rm
from derivative_models import cs_first_order, cs_rnea_second_order, lie_directions, mass_matrix, sym
from redmax.testing.pinocchio_bridge import DofMap
from redmax.testing.robot_sweep import pinocchio_model, pinocchio_singular
from redmax.testing.robots import all_urdfs

from tolerances import COND_REL, IDENTITY_REL, PIN_REL, SO_COND_REL, SO_MAX_REL, rel

# (label, path, floating) of every file and base that Pinocchio loads with at least one DOF (0.3 s)
CASES = [(lb, p, fl) for lb, p in all_urdfs() for fl in (False, True)
         if not isinstance(pm := pinocchio_model(p, fl), str) and pm.nv > 0]
IDS = [f"{lb}-{'floating' if fl else 'fixed'}" for lb, _, fl in CASES]
_LOADED = {}
# Round-off: an error is measured against the largest entry of the reference or, if larger, NOISE times the scale of
# the terms that sum to it (entries that nearly cancel: the rotors of iris spin about their axes of symmetry,
# derivatives of 1e-20 in both libraries; pybullet's racecar gives dtau/dq of 1e-7 N m against 4e-4 kg m^2).  NOISE =
# 1e4 eps / tol allows 1e4 eps of that scale (racecar: 1.5e3 eps in dtau/dq, 4.4e3 eps in d2qdd/dq2).
NOISE_FO = 1e4 * np.finfo(float).eps / PIN_REL
NOISE_SO = 1e4 * np.finfo(float).eps / SO_MAX_REL


def _case(label, path, floating):
    """``(m, pm, q, qd, qdd, tau)`` at a random state, or None when redmax refuses the file.  Kept per process: the
    three tests below share it; a refusal is checked by every test that meets it (for a singular M, naming the
    joint), not only by the first."""
    key = (path, floating)
    pm = pinocchio_model(path, floating)
    if key not in _LOADED:
        rng = np.random.default_rng(5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # RedmaxWarnings are checked in test_robot_files.py
            try:
                m = rm.load_urdf(path, floating_base=floating)
            except rm.ModelError as e:
                _LOADED[key] = e
            else:
                assert m.ndof == pm.nv, f"{label}: {m.ndof} DOFs here, {pm.nv} in Pinocchio"
                q = 0.3 * rng.normal(size=m.ndof)
                qd, qdd = rng.normal(size=(2, m.ndof))
                tau = rm.rnea(m, q, qd, qdd)  # (so that forward dynamics gives accelerations of about one, not 1e3
                # as a random tau on a light model would: their scale enters the round-off of forward dynamics)
                _LOADED[key] = (m, pm, q, qd, qdd, tau)
    hit = _LOADED[key]
    if isinstance(hit, rm.ModelError):
        e = str(hit)
        assert "joint '" in e and ("moves no mass" in e or "dependent" in e), f"{label}: {e}"
        assert pinocchio_singular(pm, np.random.default_rng(5)), f"{label}: refused, yet Pinocchio's M is regular: {e}"
        return None
    return hit


def _scales(M, qd):
    """``(cond(M), fV, fA)``: fV = max |M| max(1, |qd|), the scale of the torques and of their derivatives at unit
    accelerations and the state's rates, and fA = max_i sum_k |M^-1|_ik max_j |M_kj|, that of M^-1 times torques of
    the rows' own size (Skeel's condition number of M in the infinity norm)."""
    Ainv = np.abs(np.linalg.inv(M))
    return (float(np.linalg.cond(M)), float(np.abs(M).max()) * max(1.0, float(np.abs(qd).max())),
            float((Ainv @ np.abs(M).max(axis=1)).max()))


def _terms(M, T, fA):
    """The scale of the terms of M^-1 T, T the inverse-dynamics derivative that forward dynamics solves for (for
    ``dqdd/dqd``, ``dtau/dqd``): max_i sum_k |M^-1|_ik max |T[k]|, and at least fA (where T is round-off itself)."""
    rows = np.abs(T).reshape(T.shape[0], -1).max(axis=1)
    return max(float((np.abs(np.linalg.inv(M)) @ rows).max()), fA)


def test_the_cases_are_there():
    """The sweeps below cannot pass empty: example-robot-data (a test extra) gives more than 100 file-base pairs."""
    assert sum(lb.startswith("erd:") for lb, _, _ in CASES) > 100


@pytest.mark.parametrize("label,path,floating", CASES, ids=IDS)
def test_first_order_equals_pinocchio(label, path, floating):
    """rnea_derivatives, aba_derivatives and Minv against Pinocchio's, in tangent rates (the free flyer's body
    twist); forward dynamics also times M."""
    case = _case(label, path, floating)
    if case is None:
        return
    m, pm, q, qd, qdd, tau = case
    mp = DofMap(m, pm, tangent=True)
    pd = pm.createData()
    qp = mp.q_pin(q)
    M = mass_matrix(m, q, True)
    cond, fV, fA = _scales(M, qd)
    aba_rel = max(PIN_REL, COND_REL * cond)
    dq, dv, _ = (x.copy() for x in pin.computeRNEADerivatives(pm, pd, qp, mp.vec(qd), mp.vec(qdd)))
    ours_id = rm.rnea_derivatives(m, q, qd, qdd, tangent=True)
    assert rel(ours_id[0], mp.mat(dq), NOISE_FO * fV) < PIN_REL, label
    assert rel(ours_id[1], mp.mat(dv), NOISE_FO * fV) < PIN_REL, label
    aq, av, Minv = (mp.mat(x.copy()) for x in pin.computeABADerivatives(pm, pd, qp, mp.vec(qd), mp.vec(tau)))
    ours = rm.aba_derivatives(m, q, qd, tau, tangent=True)  # (tau = rnea(q, qd, qdd): the same state)
    for a, b, T in ((ours[0], aq, ours_id[0]), (ours[1], av, ours_id[1])):
        assert rel(a, b, NOISE_FO * _terms(M, T, fA)) < aba_rel, label  # forward error
        assert rel(M @ a, M @ b, NOISE_FO * fV) < PIN_REL, label  # the torques they stand for: no cond(M)
    assert rel(ours[2], sym(Minv)) < aba_rel, label


@pytest.mark.parametrize("label,path,floating", CASES, ids=IDS)
def test_balafoutis_patel(label, path, floating):
    """Fixed base: torques, partials and M equal RNEA's, IDSVA's and CRBA's; a free base is declined, naming it."""
    case = _case(label, path, floating)
    if case is None:
        return
    m, _, q, qd, qdd, _ = case
    if floating:
        with pytest.raises(rm.ModelError, match="root_joint"):
            rm.balafoutis_patel.inverse_dynamics(m, q, qd, qdd)
        return
    fM = float(np.abs(rm.crba(m, q)).max())
    bp = rm.balafoutis_patel.inverse_dynamics(m, q, qd, qdd)
    ref = (rm.rnea(m, q, qd, qdd), *rm.rnea_derivatives(m, q, qd, qdd), rm.crba(m, q))
    for a, b in zip(bp, ref, strict=True):
        assert rel(a, b, fM) < IDENTITY_REL, label


@pytest.mark.parametrize("label,path,floating", CASES, ids=IDS)
def test_second_order_equals_complex_step(label, path, floating):
    """The eight tensors against the complex step of the first order: the model's coordinates and, with a free
    base, tangent rates (complex step along the body-twist direction T^-1 e_k of each DOF)."""
    case = _case(label, path, floating)
    if case is None:
        return
    m, _, q, qd, qdd, tau = case
    I = np.eye(m.ndof)
    for tg in (False, True) if floating else (False,):
        D = lie_directions(m, q, tg)
        M = mass_matrix(m, q, tg)

        d2q, d2v, d2qv, dM = cs_rnea_second_order(m, q, qd, qdd, tangent=tg)
        (a2q,) = cs_first_order(lambda x, tg=tg: rm.aba_derivatives(m, x, qd, tau, tangent=tg)[:1], q, D)
        a2qv, a2v = cs_first_order(lambda x, tg=tg: rm.aba_derivatives(m, q, x, tau, tangent=tg)[:2], qd, I)
        (a2qt,) = cs_first_order(lambda x, tg=tg: rm.aba_derivatives(m, q, qd, x, tangent=tg)[:1], tau, I)
        S = rm.rnea_second_order_derivatives(m, q, qd, qdd, tangent=tg)
        A = rm.aba_second_order_derivatives(m, q, qd, tau, tangent=tg)
        cond, fV, fA = _scales(M, qd)
        Ainv = float(np.abs(np.linalg.inv(M)).max())
        names = ("d2tau_dq2", "d2tau_dqd2", "d2tau_dqdqd", "dM_dq", "d2qdd_dq2", "d2qdd_dqd2", "d2qdd_dqdqd",
                 "d2qdd_dqdtau")
        refs = (d2q, d2v, d2qv, dM, a2q, a2v, a2qv, a2qt)
        for i, (got, ref) in enumerate(zip((*S, *A), refs, strict=True)):
            if i < 4:
                assert rel(got, ref, NOISE_SO * fV) < SO_MAX_REL, f"{label}: {names[i]} (tangent={tg})"
                continue
            tol = max(SO_MAX_REL, SO_COND_REL * cond)
            # the terms: M^-1 times the inverse-dynamics tensor of the same kind (d2qdd/dq dtau = -M^-1 dM/dq M^-1)
            terms = _terms(M, S[i - 4], fA) * (Ainv if i == 7 else 1.0)
            assert rel(got, ref, NOISE_SO * terms) < tol, f"{label}: {names[i]} (tangent={tg})"  # forward error
            Mg, Mr = np.tensordot(M, got, axes=1), np.tensordot(M, ref, axes=1)  # and in torques: no cond(M)
            assert rel(Mg, Mr, NOISE_SO * fV * (Ainv if i == 7 else 1.0)) < tol, f"{label}: {names[i]} x M"
