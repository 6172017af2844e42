"""First-order derivatives of inverse and forward dynamics (IDSVA, FDSVA) against complex step of rnea/aba on
models with every joint kind (chains and trees, fixed and floating, external wrenches, Euler charts, gravity
off), in the model's coordinates and in tangent rates; input checks."""

import numpy as np
import pytest

from derivative_models import charted as rm
from derivative_models import (
    cs_first_order,
    kinds_model,
    lie_directions,
    model_rates,
    rel,
    state,
    tangent_map,
    tangent_rates,
)
from redmax.testing.models import random_model, random_state

from tolerances import COND_REL, CS_REL

CASES = [("chain", 18, False), ("random", 22, True), ("chain", 9, True)]


@pytest.mark.parametrize("topology,n,floating", CASES)
def test_rnea_derivatives_equal_complex_step_of_rnea(topology, n, floating):
    rng = np.random.default_rng(n)
    m = kinds_model(rng, n, topology, floating)
    q, qd, qdd, _, fext = state(rng, m)
    dq, dqd = rm.rnea_derivatives(m, q, qd, qdd, f_ext=fext)
    I = np.eye(m.ndof)
    (cq,) = cs_first_order(lambda x: (rm.rnea(m, x, qd, qdd, f_ext=fext),), q, I)
    (cv,) = cs_first_order(lambda x: (rm.rnea(m, q, x, qdd, f_ext=fext),), qd, I)
    assert rel(dq, cq) < CS_REL and rel(dqd, cv) < CS_REL
    # without gravity, and the plain fast path (float64, no options) equals the checked path
    dq0, _ = rm.rnea_derivatives(m, q, qd, qdd, gravity=False)
    (cq0,) = cs_first_order(lambda x: (rm.rnea(m, x, qd, qdd, gravity=False),), q, I)
    assert rel(dq0, cq0) < CS_REL
    a, b = rm.rnea_derivatives(m, q, qd, qdd)
    c, d = rm.rnea_derivatives(m, list(q), list(qd), list(qdd))
    assert rel(a, c) < 1e-14 and rel(b, d) < 1e-14


@pytest.mark.parametrize("joints,blocks", [("revolute", 1), ("multi", 4)])
def test_floating_base_chain_rule_with_one_and_with_several_blocks(joints, blocks):
    """The in-place chain rule (every body with as many core DOFs as DOFs) on a floating base with revolute joints
    (one block, its rows right after its columns) and with spherical joints too (several blocks, all columns
    before any rows): the model's coordinates against complex step of rnea."""
    from redmax.derivatives.core_tree import core_structure

    m = random_model(np.random.default_rng(4), 14, "random", joints, floating=True)
    CI = core_structure(m, False)
    o_tr = 4 + 2 * (m.nb + 1)  # triv (nb) after [ncj, ncd, all_trivial, aligned, cj0, cd0]
    assert CI[3] == 1 and sum(CI[o_tr + i] != 1 for i in range(m.nb)) == blocks
    rng = np.random.default_rng(1)
    q = m.q0 + 0.3 * rng.normal(size=m.ndof)
    qd, qdd = rng.normal(size=(2, m.ndof))
    dq, dv = rm.rnea_derivatives(m, q, qd, qdd)
    I = np.eye(m.ndof)
    (cq,) = cs_first_order(lambda x: (rm.rnea(m, x, qd, qdd),), q, I)
    (cv,) = cs_first_order(lambda x: (rm.rnea(m, q, x, qdd),), qd, I)
    assert rel(dq, cq) < CS_REL and rel(dv, cv) < CS_REL


def test_derivatives_with_respect_to_external_wrenches():
    rng = np.random.default_rng(4)
    m = kinds_model(rng, 12, "random", True)
    q, qd, qdd, tau, fext = state(rng, m)
    *_, dfe = rm.rnea_derivatives(m, q, qd, qdd, f_ext=fext, wrt_fext=True)
    qc = q.astype(complex)  # rnea takes the dtype of q for the wrenches
    (cf,) = cs_first_order(lambda x: (rm.rnea(m, qc, qd, qdd, f_ext=x.reshape(m.nb, 6)),), fext.reshape(-1),
                           np.eye(6 * m.nb))
    assert dfe.shape == (m.ndof, m.nb, 6)
    assert rel(dfe.reshape(m.ndof, -1), cf) < CS_REL
    *_, dfa = rm.aba_derivatives(m, q, qd, tau, f_ext=fext, wrt_fext=True)
    (ca,) = cs_first_order(lambda x: (rm.aba(m, qc, qd, tau, f_ext=x.reshape(m.nb, 6)),), fext.reshape(-1),
                           np.eye(6 * m.nb))
    assert rel(dfa.reshape(m.ndof, -1), ca) < COND_REL * np.linalg.cond(rm.crba(m, q))


def test_euler_charts_other_than_the_initial_one():
    rng = np.random.default_rng(8)
    m = random_model(rng, n=6, topology="chain", joints="mixed")
    js = m.jstate0.copy()
    for i, j in enumerate(m.joints):
        if j.kind == "spherical_euler":
            js[i] = (js[i] + 5) % 12
    q, qd = random_state(rng, m)
    qdd = rng.normal(size=m.ndof)
    dq, _ = rm.rnea_derivatives(m, q, qd, qdd, jstate=js)
    (cq,) = cs_first_order(lambda x: (rm.rnea(m, x, qd, qdd, jstate=js),), q, np.eye(m.ndof))
    assert rel(dq, cq) < CS_REL


@pytest.mark.parametrize("topology,n,floating", CASES[:2])
def test_aba_derivatives_equal_complex_step_of_aba(topology, n, floating):
    rng = np.random.default_rng(10 + n)
    m = kinds_model(rng, n, topology, floating)
    q, qd, _, tau, fext = state(rng, m)
    dq, dqd, Minv = rm.aba_derivatives(m, q, qd, tau, f_ext=fext)
    I = np.eye(m.ndof)
    (cq,) = cs_first_order(lambda x: (rm.aba(m, x, qd, tau, f_ext=fext),), q, I)
    (cv,) = cs_first_order(lambda x: (rm.aba(m, q, x, tau, f_ext=fext),), qd, I)
    tol = COND_REL * np.linalg.cond(rm.crba(m, q))  # both sides solve with M (condition 1e5 to 1e7 here)
    assert rel(dq, cq) < tol and rel(dqd, cv) < tol
    # the same algorithm compiled inside another kernel: equal up to the round-off M's conditioning allows (fastmath
    # contraction may differ between call paths; cond(M) = 5.8e5 on the chain of 18 gives 4.6e-14 there)
    assert rel(Minv, rm.minv(m, q)) < tol
    a, b, c = rm.aba_derivatives(m, q, qd, tau)  # the fast path
    d, e, f = rm.aba_derivatives(m, list(q), qd, tau)
    assert rel(a, d) < tol and rel(b, e) < tol and rel(c, f) < tol


def _tau_tangent(m, q, nu, nud, fext):
    """Inverse dynamics in tangent rates from rnea alone: tau_t = T^-T rnea(q, T^-1 nu, T^-1 (nud - Tdot qd))."""
    qd, qdd = model_rates(m, q, nu, nud)
    T, _ = tangent_map(m, q, qd)
    return np.linalg.solve(T.T, rm.rnea(m, q, qd, qdd, f_ext=fext))


def test_tangent_first_order_equals_lie_derivatives_of_rnea():
    """With tangent=True, derivatives along body-twist perturbations of spherical and free joints (complex
    step of the configuration along T^-1 e_k, rates fixed) and with respect to the body twists."""
    rng = np.random.default_rng(21)
    m = kinds_model(rng, 12, "random", True)
    q, qd, qdd, _, fext = state(rng, m)
    nu, nud = tangent_rates(m, q, qd, qdd)
    dq, dv = rm.rnea_derivatives(m, q, nu, nud, f_ext=fext, tangent=True)
    (cq,) = cs_first_order(lambda x: (_tau_tangent(m, x, nu, nud, fext),), q, lie_directions(m, q, True))
    (cv,) = cs_first_order(lambda x: (_tau_tangent(m, q, x, nud, fext),), nu, np.eye(m.ndof))
    assert rel(dq, cq) < CS_REL and rel(dv, cv) < CS_REL
    assert np.allclose(model_rates(m, q, nu), qd, rtol=1e-12, atol=1e-12)


def _nud_tangent(m, q, nu, tau_t, fext):
    """Forward dynamics in tangent rates from aba alone: nud = T qdd + Tdot qd, qdd = aba(q, T^-1 nu, T^T tau_t)."""
    qd = model_rates(m, q, nu)
    T, Td = tangent_map(m, q, qd)
    return T @ rm.aba(m, q, qd, T.T @ tau_t, f_ext=fext) + Td @ qd


@pytest.mark.parametrize("n,direct", [(12, True), (16, False)])
def test_tangent_aba_derivatives_equal_lie_derivatives_of_aba(n, direct):
    """aba_derivatives(tangent=True) along body-twist perturbations (complex step of forward dynamics in tangent
    rates) and M_t^-1 = T M^-1 T^T, on both of the kernel's ways: ABA run in the body twists directly (whole
    spherical and free joints, n = 12) and the conversion through T (n = 16 adds a spherical joint between two
    prismatic ones in one composite)."""
    from redmax.dynamics.tangent import body_tangent_modes

    rng = np.random.default_rng(40 + n)
    m = kinds_model(rng, n, "random", True)
    assert (body_tangent_modes(*m.packed).size != 0) == direct
    q, qd, _, tau, fext = state(rng, m)
    dq, dv, Mt = rm.aba_derivatives(m, q, qd, tau, f_ext=fext, tangent=True)
    (cq,) = cs_first_order(lambda x: (_nud_tangent(m, x, qd, tau, fext),), q, lie_directions(m, q, True))
    (cv,) = cs_first_order(lambda x: (_nud_tangent(m, q, x, tau, fext),), qd, np.eye(m.ndof))
    T, _ = tangent_map(m, q)
    tol = COND_REL * np.linalg.cond(T @ rm.crba(m, q) @ T.T)
    assert rel(dq, cq) < tol and rel(dv, cv) < tol
    assert rel(Mt, T @ rm.minv(m, q) @ T.T) < tol


def test_tangent_rates_refuse_an_armature_on_spherical_and_free_joints():
    """An armature is diagonal in the model's rates, not in body twists (``T^-T diag(a) T^-1`` depends on q): every
    tangent=True derivative raises a ModelError naming the joint, and tangent=False and armatures on other joints
    still work (the armature does not enter the q and qd derivatives of inverse dynamics)."""
    from redmax.io.mjcf import with_armature

    rng = np.random.default_rng(5)
    base = kinds_model(rng, 6, "chain", True)
    q, qd, qdd, tau, _ = state(rng, base)
    T, _ = tangent_map(base, q)
    plain = [d for d in range(base.ndof) if np.count_nonzero(T[d]) == 1 and np.count_nonzero(T[:, d]) == 1]
    a = np.zeros(base.ndof)
    a[plain] = 0.2  # DOFs whose rates tangent=True keeps
    ok = with_armature(base, a)
    dq, dv = rm.rnea_derivatives(ok, q, qd, qdd, tangent=True)
    bq, bv = rm.rnea_derivatives(base, q, qd, qdd, tangent=True)
    assert rel(dq, bq) < CS_REL and rel(dv, bv) < CS_REL
    a[2] = 0.3  # a DOF of the free base
    m = with_armature(base, a)
    for f, x in ((rm.rnea_derivatives, qdd), (rm.aba_derivatives, tau), (rm.rnea_second_order_derivatives, qdd),
                 (rm.aba_second_order_derivatives, tau)):
        with pytest.raises(rm.ModelError, match=f"joint '{m.joint_names[0]}' has an armature"):
            f(m, q, qd, x, tangent=True)
    dq, _ = rm.rnea_derivatives(m, q, qd, qdd)
    (cq,) = cs_first_order(lambda x: (rm.rnea(m, x, qd, qdd),), q, np.eye(m.ndof))
    assert rel(dq, cq) < CS_REL


def test_bad_inputs_raise_model_errors_naming_the_argument():
    rng = np.random.default_rng(0)
    m = random_model(rng, n=4)
    z = np.zeros(m.ndof)
    with pytest.raises(rm.ModelError, match="qd must have shape"):
        rm.rnea_derivatives(m, z, np.zeros(3), z)
    with pytest.raises(rm.ModelError, match="qdd contains NaN"):
        rm.rnea_derivatives(m, z, z, np.full(m.ndof, np.nan))
    with pytest.raises(rm.ModelError, match="f_ext must have shape"):
        rm.rnea_derivatives(m, z, z, z, f_ext=np.zeros((2, 6)))
    with pytest.raises(rm.ModelError, match="tau contains NaN"):
        rm.aba_derivatives(m, z, z, np.full(m.ndof, np.inf))
    with pytest.raises(rm.ModelError, match="q must have shape"):
        rm.rnea_second_order_derivatives(m, np.zeros((m.ndof, 1)), z, z)
    with pytest.raises(rm.ModelError, match="jstate must have shape"):
        rm.aba_second_order_derivatives(m, z, z, z, jstate=np.zeros(1, dtype=int))


def test_chart_models_require_jstate():
    """As every dynamics call: a model with Euler-angle joints needs the chart words of its state."""
    import redmax

    m = kinds_model(np.random.default_rng(3), 12)
    assert m.chart_joints.size
    q, qd, qdd, _, _ = state(np.random.default_rng(4), m)
    for f in (redmax.rnea_derivatives, redmax.rnea_second_order_derivatives):
        with pytest.raises(redmax.ModelError, match="jstate"):
            f(m, q, qd, qdd)
        assert np.all(np.isfinite(f(m, q, qd, qdd, jstate=m.jstate0)[0]))
    for f in (redmax.aba_derivatives, redmax.aba_second_order_derivatives):
        with pytest.raises(redmax.ModelError, match="jstate"):
            f(m, q, qd, qdd)
