"""Second-order derivatives (IDSVA-SO, FDSVA-SO) against complex step of the first-order kernels (which are
scalar-generic), the accuracy study of Singh, Russell & Wensing (RMS relative error, Eq. 43) on chains of 40
with every joint kind, symmetries, branch-induced sparsity, tangent rates and an algorithm identity."""

import numpy as np
import pytest

from derivative_models import charted as rm
from derivative_models import (
    cs_first_order,
    cs_rnea_second_order,
    kinds_model,
    lie_directions,
    rel,
    rms_rel,
    state,
    tangent_rates,
)
from redmax.testing.models import random_model, random_state

from tolerances import COND_REL, CS_REL, SO_RMS_REL


@pytest.mark.parametrize("topology,n,floating", [("chain", 40, False), ("chain", 40, True), ("random", 30, True),
                                                 ("random", 14, True)])
def test_second_order_inverse_dynamics_equals_complex_step(topology, n, floating):
    """Every joint kind (spherical, Euler, free, spline, composite, ...), external wrenches: RMS relative error
    <= 1e-12 (the paper's accuracy study uses chains of 40) and largest error <= CS_REL of the largest entry.
    The tree of 14 has core and model indices aligned (the in-place chain rule), with a composite joint whose
    block spans several core joints (prismatic, spherical in exponential coordinates, prismatic)."""
    rng = np.random.default_rng(n + floating)
    m = kinds_model(rng, n, topology, floating)
    q, qd, qdd, _, fext = state(rng, m)
    ours = rm.rnea_second_order_derivatives(m, q, qd, qdd, f_ext=fext)
    ref = cs_rnea_second_order(m, q, qd, qdd, fext)
    for name, a, b in zip(("d2tau_dq2", "d2tau_dqd2", "d2tau_dqdqd", "dM_dq"), ours, ref, strict=True):
        assert a.shape == (m.ndof,) * 3
        assert rms_rel(a, b) <= SO_RMS_REL, name
        assert rel(a, b) < CS_REL, name


def test_symmetries_and_identities():
    rng = np.random.default_rng(3)
    m = kinds_model(rng, 24, "random", True)
    q, qd, qdd, _, _ = state(rng, m)
    d2q, d2v, _, dM = rm.rnea_second_order_derivatives(m, q, qd, qdd)
    # second partials in the model's own coordinates commute; M is symmetric
    assert rel(d2v, d2v.transpose(0, 2, 1)) < CS_REL
    assert rel(dM, dM.transpose(1, 0, 2)) < CS_REL
    assert rel(d2q, d2q.transpose(0, 2, 1)) < CS_REL
    # dM/dq b = dtau/dq at (q, 0, b) without gravity (IDFOZA, Singh et al. Eq. 52)
    b = rng.normal(size=m.ndof)
    dq0, _ = rm.rnea_derivatives(m, q, np.zeros(m.ndof), b, gravity=False)
    assert rel(np.einsum("ijk,j->ik", dM, b), dq0) < CS_REL
    # d2tau/dqd2 = 2 x the Christoffel-like symmetric part: tau is quadratic in qd, so the second derivative
    # along qd reproduces the velocity terms: 1/2 qd^T d2tau_dqd2 qd = rnea(q, qd, 0) - rnea(q, 0, 0)
    quad = 0.5 * np.einsum("ijk,j,k->i", d2v, qd, qd)
    z = np.zeros(m.ndof)
    assert rel(quad, rm.rnea(m, q, qd, z) - rm.rnea(m, q, z, z)) < CS_REL


def test_branch_induced_sparsity():
    """Entries of bodies on different branches are exactly zero (only ancestor triples are visited)."""
    rng = np.random.default_rng(5)
    m = random_model(rng, n=15, topology="binary", joints="revolute")
    q, qd = random_state(rng, m)
    d2q, d2v, d2qv, dM = rm.rnea_second_order_derivatives(m, q, qd, rng.normal(size=m.ndof))
    anc = np.zeros((m.nb, m.nb), dtype=bool)  # anc[a, b]: a is b or an ancestor of b
    for b in range(m.nb):
        a = b
        while a >= 0:
            anc[a, b] = True
            a = m.parent[a]
    related = anc | anc.T
    for T in (d2q, d2v, d2qv, dM):
        for i in range(m.nb):
            for j in range(m.nb):
                for k in range(m.nb):
                    if not (related[i, j] and related[j, k] and related[i, k]):
                        assert T[i, j, k] == 0.0
    assert np.count_nonzero(d2q) < 0.5 * d2q.size


def test_related_dofs_is_the_ancestor_relation_and_calls_are_independent():
    """The kernel's mask of related DOF pairs (what its passes skip) is the tree's ancestor relation, and every
    call returns fresh, equal tensors (the outputs are allocated per call, the mirrored halves rebuilt)."""
    from redmax.derivatives.core_tree import core_structure
    from redmax.derivatives.second_order_chain import related_dofs

    rng = np.random.default_rng(11)
    m = random_model(rng, n=20, topology="random", joints="revolute")
    anc = np.zeros((m.nb, m.nb), dtype=bool)
    for b in range(m.nb):
        a = b
        while a >= 0:
            anc[a, b] = True
            a = m.parent[a]
    np.testing.assert_array_equal(related_dofs(core_structure(m), m.nb).astype(bool), anc | anc.T)
    q, qd = random_state(rng, m)
    qdd = rng.normal(size=m.ndof)
    first = rm.rnea_second_order_derivatives(m, q, qd, qdd)
    second = rm.rnea_second_order_derivatives(m, q, qd, qdd)
    for a, b in zip(first, second, strict=True):
        assert a is not b
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("floating,tangent", [(False, False), (True, False), (True, True)])
def test_chain_kernel_writes_every_entry(floating, tangent):
    """On chains every DOF triple is related: the walk and its mirror write each entry of the core tensors d2q,
    d2v, d2qv.  NaN-filled ones give the same result as zeroed ones (dM zeroed in both: its entries with k above
    both i and j are never written), on a chain of every joint kind (multi-DOF joints, free base, body-twist
    rates), through the one-thread path every scalar type takes (complex step's); a tree is detected as one."""
    from redmax.derivatives.core_tree import core_structure
    from redmax.derivatives.second_order_walk import plan, single_path, walk_serial
    from redmax.model.layout import initial_jstate

    rng = np.random.default_rng(5 + floating + 2 * tangent)
    m = kinds_model(rng, 18, "chain", floating)
    q, qd, qdd, _, fext = state(rng, m)
    Ii, Ff = m.packed
    CI = core_structure(m, tangent)
    assert single_path(CI)
    assert not single_path(core_structure(random_model(rng, n=6, topology="binary", joints="revolute")))
    fb = np.ascontiguousarray(fext, dtype=float)
    js = np.array(initial_jstate(Ii))
    rel, cj = plan(CI, m.nb, 1)[:2]
    n = int(CI[1])
    ones = np.ones(n, dtype=np.uint8)
    ref = [np.zeros((n, n, n)) for _ in range(4)]
    fo_ref = walk_serial(Ii, Ff, CI, q, qd, qdd, js, fb, 1.0, tangent, True, ones, rel, cj, *ref)
    got = [np.full((n, n, n), np.nan) for _ in range(3)] + [np.zeros((n, n, n))]
    fo = walk_serial(Ii, Ff, CI, q, qd, qdd, js, fb, 1.0, tangent, True, ones, rel, cj, *got)
    for a, b in zip(got + list(fo), ref + list(fo_ref), strict=True):
        assert np.isfinite(a).all()
        np.testing.assert_array_equal(a, b)


def test_tangent_second_order_equals_lie_derivatives():
    """Free and spherical joints in body-twist rates: complex step along T^-1 e_k of the tangent first order."""
    rng = np.random.default_rng(11)
    m = kinds_model(rng, 16, "random", True)
    q, qd, qdd, _, fext = state(rng, m)
    nu, nud = tangent_rates(m, q, qd, qdd)
    ours = rm.rnea_second_order_derivatives(m, q, nu, nud, f_ext=fext, tangent=True)
    ref = cs_rnea_second_order(m, q, nu, nud, fext, tangent=True)
    for a, b in zip(ours, ref, strict=True):
        assert rel(a, b) < CS_REL
    # rotations do not commute: the tangent d2tau_dq2 of the free joint is not symmetric in (j, k)
    assert rel(ours[0][:, :3, :3], ours[0][:, :3, :3].transpose(0, 2, 1)) > 1e-6  # angular DOFs first


@pytest.mark.parametrize("n", [1, 7, 36, 46])
def test_forward_products_stay_on_the_calling_thread_of_blas(n, monkeypatch):
    """The -M^-1 products of FDSVA-SO equal one matrix product; up to 45 DOFs every BLAS call is small enough that
    OpenBLAS runs it on the calling thread (no BLAS threads left spinning on the cores redmax's own threads use
    next), above it is one call (real and complex)."""
    from redmax.derivatives import aba_second_order as fd

    calls = []
    matmul = np.matmul

    def counted(a, b, **kw):
        calls.append(a.shape[0] * a.shape[1] * b.shape[1])
        return matmul(a, b, **kw)

    rng = np.random.default_rng(n)
    for dtype in (float, complex):
        nM = rng.normal(size=(n, n)).astype(dtype)
        X = rng.normal(size=(n, n, n)).astype(dtype)
        if dtype is complex:
            X += 1j * rng.normal(size=X.shape)
        calls.clear()
        monkeypatch.setattr(fd.np, "matmul", counted)
        got = fd._product(nM, X, np.empty(X.shape, X.dtype))
        monkeypatch.setattr(fd.np, "matmul", matmul)
        ref = (nM @ X.reshape(n, n * n)).reshape(n, n, n)
        assert got.dtype == ref.dtype and got.shape == (n, n, n)
        np.testing.assert_allclose(got, ref, rtol=1e-13, atol=1e-13 * np.abs(ref).max())
        if n <= 45:
            assert sum(calls) == n ** 4 and max(calls) <= fd.ONE_THREAD_GEMM
        else:
            assert calls == [n ** 4]


@pytest.mark.parametrize("topology,n", [("chain", 12), ("random", 20)])
def test_forward_products_by_either_path_equal_the_formulas(topology, n, monkeypatch):
    """FDSVA-SO's bracketed terms and -M^-1 products (Eqs. 46-49 as the module docstring writes them) by the
    sparse kernel and by the batched products, each forced, equal the formulas evaluated with einsum; into ``out``
    the same numbers, in the caller's arrays."""
    from redmax.derivatives import aba_second_order as fd

    rng = np.random.default_rng(n)
    m = random_model(rng, n=n, topology=topology, joints="revolute", gravity=(0, 0, -9.81))
    q, qd, tau = rng.normal(size=(3, n))
    FDq, FDv, Minv = (np.asarray(a) for a in rm.aba_derivatives(m, q, qd, tau))
    qdd = np.linalg.solve(rm.crba(m, q), tau - rm.rnea(m, q, qd, np.zeros(n)))
    d2q, d2v, d2qv, dM = rm.rnea_second_order_derivatives(m, q, qd, qdd)
    e = np.einsum
    ref = (-e("ia,ajk->ijk", Minv, d2q + e("alk,lj->ajk", dM, FDq) + e("alj,lk->ajk", dM, FDq)),
           -e("ia,ajk->ijk", Minv, d2v),
           -e("ia,ajk->ijk", Minv, d2qv + e("alj,lk->ajk", dM, FDv)),
           -e("ia,ajk->ijk", Minv, e("alj,lk->ajk", dM, Minv)))
    for sparse in (2.0, 0.0):  # every dM, then no dM, below the threshold
        monkeypatch.setattr(fd, "SPARSE_DM", sparse)
        for got in (fd._products(Minv, FDq, FDv, d2q, d2v, d2qv, dM),
                    rm.aba_second_order_derivatives(m, q, qd, tau),
                    rm.aba_second_order_derivatives(m, q, qd, tau, out=tuple(np.full((n, n, n), np.nan)
                                                                             for _ in range(4)))):
            for a, b in zip(got, ref, strict=True):
                assert a.flags.c_contiguous and a.flags.writeable
                np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-11 * np.abs(b).max())
    out = tuple(np.zeros((n, n, n)) for _ in range(4))
    got = rm.aba_second_order_derivatives(m, q, qd, tau, out=out)
    assert all(a is b for a, b in zip(got, out, strict=True))


def test_forward_second_order_out_is_checked():
    """``out=`` of aba_second_order_derivatives: four separate float64 (n, n, n) arrays and real inputs, else a
    ModelError naming the argument."""
    from redmax.errors import ModelError

    rng = np.random.default_rng(3)
    m = random_model(rng, n=5, topology="chain", joints="revolute")
    q, qd, tau = rng.normal(size=(3, 5))
    good = tuple(np.zeros((5, 5, 5)) for _ in range(4))
    with pytest.raises(ModelError, match="tuple of four"):
        rm.aba_second_order_derivatives(m, q, qd, tau, out=good[:3])
    with pytest.raises(ModelError, match=r"out\[2\] \(d2qdd_dqdqd\)"):
        rm.aba_second_order_derivatives(m, q, qd, tau, out=(*good[:2], np.zeros((5, 5, 4)), good[3]))
    with pytest.raises(ModelError, match="share memory"):
        rm.aba_second_order_derivatives(m, q, qd, tau, out=(good[0], good[1], good[1], good[3]))
    with pytest.raises(ModelError, match="complex q"):
        rm.aba_second_order_derivatives(m, q + 1e-20j, qd, tau, out=good)


@pytest.mark.parametrize("tangent", [False, True])
def test_second_order_forward_dynamics_equals_complex_step(tangent):
    rng = np.random.default_rng(17)
    m = kinds_model(rng, 14, "random", True)
    q, qd, _, tau, fext = state(rng, m)
    if tangent:
        qd = tangent_rates(m, q, qd)
    ours = rm.aba_second_order_derivatives(m, q, qd, tau, f_ext=fext, tangent=tangent)
    I = np.eye(m.ndof)
    (aq,) = cs_first_order(lambda x: rm.aba_derivatives(m, x, qd, tau, f_ext=fext, tangent=tangent)[:1], q,
                           lie_directions(m, q, tangent))
    av, vv = cs_first_order(lambda x: rm.aba_derivatives(m, q, x, tau, f_ext=fext, tangent=tangent)[:2], qd, I)
    (at,) = cs_first_order(lambda x: rm.aba_derivatives(m, q, qd, x, f_ext=fext, tangent=tangent)[:1], tau, I)
    tol = COND_REL * np.linalg.cond(rm.crba(m, q))
    for a, b in zip(ours, (aq, vv, av, at), strict=True):
        assert rel(a, b) < tol
