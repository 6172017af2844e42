"""Joint derivative kernels (``redmax.joints.derivatives``): the core expansion reproduces every joint's Q, S
and Sdot, and dS/dq, dSdot/dq, dQ/dq and the map jets dA, d2A, d3A equal complex step."""

import numpy as np
import pytest

import redmax as rm
from derivative_models import every_kind
from redmax.bodies import Cuboid
from redmax.builder import ModelBuilder
from redmax.joints.core_expansion import core_count, joint_expansion, so3_jr_jets
from redmax.joints.derivatives import derivatives
from redmax.joints.dispatch import joint_calc
from redmax.spatial import right_jacobian_so3

from tolerances import CS_REL, CS_STEP, ROUNDOFF


def _model(rng):
    b = ModelBuilder("kinds", (0.0, 0.0, -9.81))
    for k, j in enumerate(every_kind(rng)):
        q0 = rng.uniform(0.1, 0.9, 2) if j.kind == "spline_surface" else (rng.normal(size=j.nq) if j.nq else None)
        b.add_body(f"b{k}", Cuboid(1, 1, 1), j, q=q0)
    return b.build()


MODEL = _model(np.random.default_rng(0))


@pytest.mark.parametrize("i", range(MODEL.nb), ids=[f"{i}-{j.kind}" for i, j in enumerate(MODEL.joints)])
def test_joint_derivatives_equal_complex_step(i):
    m = MODEL
    rng = np.random.default_rng(i)
    a, b = m.idx[i], m.idx[i + 1]
    n = b - a
    q, qd = m.q0[a:b].copy(), rng.normal(size=n)
    d = derivatives(m, i, q, qd)
    code, p, js = int(m.jtype[i]), m.jparam[m.jp_off[i]:m.jp_off[i + 1]], int(m.jstate0[i])

    def calc(x):
        Q = np.zeros((4, 4), x.dtype)
        S = np.zeros((6, n), x.dtype)
        Sd = np.zeros((6, n), x.dtype)
        joint_calc(code, p, x, qd.astype(x.dtype), js, Q, S, Sd)
        return Q, S, Sd

    Q, S, Sd = calc(q)
    assert np.abs(d["Q"] - Q).max() < ROUNDOFF
    if n == 0:
        return
    scale = max(1.0, np.abs(S).max())
    assert np.abs(d["S"] - S).max() < 1e-13 * scale and np.abs(d["Sdot"] - Sd).max() < 1e-13 * scale
    for k in range(n):
        x = q.astype(complex)
        x[k] += 1j * CS_STEP
        Qc, Sc, Sdc = calc(x)
        for key, ref in (("dQ", Qc), ("dS", Sc), ("dSdot", Sdc)):
            got = d[key][..., k]
            assert np.abs(got - ref.imag / CS_STEP).max() <= CS_REL * max(1.0, np.abs(ref.imag / CS_STEP).max())


@pytest.mark.parametrize("x", [0.02, 0.6, 1.9, 3.3, 4.5])
def test_so3_right_jacobian_jets(x):
    rng = np.random.default_rng(int(10 * x))
    v = rng.normal(size=3)
    q = x * v / np.linalg.norm(v)
    outs = [np.zeros((3,) * k) for k in (2, 3, 4, 5)]
    so3_jr_jets(q, *outs, 3)
    assert np.abs(outs[0] - right_jacobian_so3(q)).max() < 1e-14
    for k in range(3):
        qc = q.astype(complex)
        qc[k] += 1j * CS_STEP
        oc = [np.zeros((3,) * j, complex) for j in (2, 3, 4, 5)]
        so3_jr_jets(qc, *oc, 3)
        for lower, higher in zip(oc[:-1], outs[1:], strict=True):
            assert np.abs(lower.imag / CS_STEP - higher[..., k]).max() < CS_REL


@pytest.mark.parametrize("kind", ["spline_curve", "spline_surface", "composite"])
def test_expansion_jets_of_nontrivial_maps(kind):
    """A (core rates per joint rate) and its derivatives dA, d2A, d3A for the joints whose map is not the
    identity (spline curve and surface, a composite with a spherical joint in exponential coordinates)."""
    m = MODEL
    i = next(k for k, j in enumerate(m.joints) if j.kind == kind and (kind != "composite" or "spherical_exp" in
                                                                       [s.kind for s in j.joints]))
    a, b = m.idx[i], m.idx[i + 1]
    n = b - a
    code, p, js = int(m.jtype[i]), m.jparam[m.jp_off[i]:m.jp_off[i + 1]], int(m.jstate0[i])
    mc = core_count(code, p, js, False)

    def jets(x):
        o = [np.zeros((6, mc), x.dtype)] + [np.zeros((mc,) + (n,) * k, x.dtype) for k in (1, 2, 3, 4)]
        joint_expansion(code, p, x, js, False, 3, *o)
        return o[1:]

    q = m.q0[a:b].copy()
    J = jets(q)
    for k in range(n):
        x = q.astype(complex)
        x[k] += 1j * CS_STEP
        Jc = jets(x)
        for lower, higher in zip(Jc[:-1], J[1:], strict=True):
            assert np.abs(lower.imag / CS_STEP - higher[..., k]).max() <= CS_REL * max(1.0, np.abs(higher).max())


def test_derivatives_checks_sizes():
    with pytest.raises(rm.ModelError, match="coordinates"):
        derivatives(MODEL, 1, np.zeros(2), np.zeros(2))
