"""Finite-element building blocks (``redmax.deformables.materials``, ``.elements``, ``.meshes``): stresses and
their derivatives against central differences, small-strain agreement with linear elasticity, element forces and
stiffness against differences of the energy, the patch test, rigid motions, mesh geometry and topology, lumped
masses, mesh files (through a stand-in for meshio), and a clamped cantilever against Euler-Bernoulli."""

import math
import sys
import types

import numpy as np
import pytest
import scipy.sparse.linalg as spla

from redmax.deformables import elements as el
from redmax.deformables import materials as mat
from redmax.deformables import meshes as ms
from redmax.errors import ModelError

from tolerances import FD_REL, FD_STEP, ROUNDOFF, rel

SMALL_STRAIN_REL = 1e-4  # both laws against linear elasticity at a strain of 1e-6
PATCH_REL = 1e-9  # interior forces of an affinely deformed mesh, relative to the boundary forces
RIGID_REL = 1e-9  # energy and forces under a rigid motion, relative to those of a unit strain
EULER_BERNOULLI_REL = 0.05  # cantilever tip deflection (tet10) against beam theory
MATERIALS_AGREE_REL = 0.01  # ... co-rotated against neo-Hookean
CODES = [mat.CODE_COROTATED, mat.CODE_NEOHOOKEAN]
MU, LAM = 1.3, 2.1  # Lamé parameters of the unit tests (Pa)


def _P(code, F, mu=MU, lam=LAM):
    P = np.empty((3, 3))
    mat.first_piola(code, mu, lam, np.ascontiguousarray(F), P)
    return P


def _A(code, F):
    A = np.empty((3, 3, 3, 3))
    mat.dP_dF(code, MU, LAM, np.ascontiguousarray(F), A)
    return A


def _rotation(rng):
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return Q * np.sign(np.linalg.det(Q))


def _deformation(kind, rng):
    """A deformation gradient near the identity, far from it (mixed stretch and rotation), or inverted."""
    if kind == "near":
        return np.eye(3) + 0.05 * rng.normal(size=(3, 3))
    if kind == "far":
        return _rotation(rng) @ np.diag(rng.uniform(0.4, 2.0, 3)) @ _rotation(rng)
    return _rotation(rng) @ np.diag([1.2, 0.9, -0.4]) @ _rotation(rng)


# ---------------------------------------------------------------------------------------------------- materials


def test_lame_values_and_validation():
    mu, lam = mat.lame(1e8, 0.3)
    assert mu == pytest.approx(1e8 / 2.6) and lam == pytest.approx(1e8 * 0.3 / (1.3 * 0.4))
    for young, poisson in [(0.0, 0.3), (-1.0, 0.3), (math.inf, 0.3), (1.0, 0.5), (1.0, -1.0), (1.0, math.nan),
                           ("a", 0.3)]:
        with pytest.raises(ModelError, match="lame"):
            mat.lame(young, poisson)


@pytest.mark.parametrize("code", CODES)
@pytest.mark.parametrize("kind", ["near", "far", "inverted"])
def test_stress_and_tangent_against_central_differences(code, kind):
    rng = np.random.default_rng(10 * code + len(kind))
    for _ in range(3):
        F = _deformation(kind, rng)
        assert (np.linalg.det(F) < 0.0) == (kind == "inverted")
        P_fd = np.empty((3, 3))
        A_fd = np.empty((3, 3, 3, 3))
        for k in range(3):
            for l in range(3):
                E = np.zeros((3, 3))
                E[k, l] = FD_STEP
                P_fd[k, l] = (mat.psi(code, MU, LAM, F + E) - mat.psi(code, MU, LAM, F - E)) / (2 * FD_STEP)
                A_fd[:, :, k, l] = (_P(code, F + E) - _P(code, F - E)) / (2 * FD_STEP)
        assert rel(_P(code, F), P_fd) < FD_REL
        A = _A(code, F)
        assert rel(A, A_fd) < FD_REL
        assert rel(A, A.transpose(2, 3, 0, 1)) < ROUNDOFF  # major symmetry (hyperelastic)


@pytest.mark.parametrize("code", CODES)
def test_rest_state_and_rotations_are_stress_free(code):
    rng = np.random.default_rng(3)
    for F in [np.eye(3), _rotation(rng), _rotation(rng)]:
        assert abs(mat.psi(code, MU, LAM, F)) < ROUNDOFF * MU
        assert np.abs(_P(code, F)).max() < ROUNDOFF * MU


@pytest.mark.parametrize("code", CODES)
def test_small_strain_response_is_linear_elasticity(code):
    rng = np.random.default_rng(4)
    G = rng.normal(size=(3, 3))
    eps = 1e-6 * 0.5 * (G + G.T)
    sigma = 2 * MU * eps + LAM * np.trace(eps) * np.eye(3)
    assert rel(_P(code, np.eye(3) + eps), sigma) < SMALL_STRAIN_REL
    Q = _rotation(rng)  # rotated: P = Q sigma to first order
    assert rel(_P(code, Q @ (np.eye(3) + eps)), Q @ sigma) < SMALL_STRAIN_REL


def test_rotation_is_the_polar_factor_of_the_svd():
    """The co-rotated law's R (Horn's quaternion) against U diag(1, 1, det UV^T) V^T of numpy's SVD; degenerate
    spectra (reflections, flat and zero F) still give a proper rotation maximising tr(R^T F)."""
    rng = np.random.default_rng(5)
    N, V, R = np.empty((4, 4)), np.empty((4, 4)), np.empty((3, 3))
    special = [np.zeros((3, 3)), np.diag([1.0, 1.0, -1.0]), -np.eye(3), np.diag([2.0, 1e-9, 1e-9]),
               np.diag([1.0, 0.0, 0.0]), np.diag([1.0, 1.0, -1.0 + 1e-9])]
    for t in range(400):
        if t < len(special):
            F = special[t]
        else:
            sig = [rng.uniform(0.05, 3.0, 3), np.array([1.0, 1.0, -1.0 + 10 ** rng.uniform(-12, -1)]),
                   rng.uniform(-2, 2, 3)][t % 3]
            F = 10 ** rng.uniform(-3, 3) * _rotation(rng) @ np.diag(sig) @ _rotation(rng)
        mat._rotation(F, N, V, R)
        assert rel(R.T @ R, np.eye(3)) < ROUNDOFF and abs(np.linalg.det(R) - 1.0) < ROUNDOFF
        U, s, Vt = np.linalg.svd(F)
        d = 1.0 if np.linalg.det(U @ Vt) > 0 else -1.0
        R0 = U @ np.diag([1.0, 1.0, d]) @ Vt
        scale = max(s[0], 1e-300)
        assert np.trace(R.T @ F) >= np.trace(R0.T @ F) - ROUNDOFF * scale
        gap = abs(s[1] + d * s[2]) / scale  # conditions R: sigma_2 + sigma_3 (signed)
        assert np.abs(R - R0).max() * gap < 1e-13


# ----------------------------------------------------------------------------------------------------- elements


def _element(nn, rng):
    """Rest positions of a random well-shaped tet4/tet10 (straight-sided) and a deformed configuration."""
    X = np.array([[0.0, 0.0, 0.0], [1.0, 0.1, 0.0], [0.2, 0.9, 0.1], [0.1, 0.2, 1.1]]) + 0.05 * rng.normal(size=(4, 3))
    if nn == 10:
        X = np.concatenate([X, 0.5 * (X[el.EDGES[:, 0]] + X[el.EDGES[:, 1]])])
    x = X @ (np.eye(3) + 0.2 * rng.normal(size=(3, 3))).T + 0.03 * rng.normal(size=X.shape)
    return X, x


def _terms(code, x, dN, w):
    nn = x.shape[0]
    f = np.full((nn, 3), np.nan)  # outputs must be overwritten
    H = np.full((nn, nn, 3, 3), np.nan)
    e = el.element_terms(code, MU, LAM, np.ascontiguousarray(x), dN, w, f, H, True)
    return e, f, H


@pytest.mark.parametrize("code", CODES)
@pytest.mark.parametrize("nn", [4, 10])
def test_element_forces_and_jacobian_against_central_differences(code, nn):
    rng = np.random.default_rng(nn + code)
    X, x = _element(nn, rng)
    dN, w = el.shape_gradients(X)
    assert dN.shape == (1 if nn == 4 else 4, nn, 3)
    assert w.sum() == pytest.approx(abs(np.linalg.det((X[1:4] - X[0]).T)) / 6, rel=ROUNDOFF)
    e, f, H = _terms(code, x, dN, w)
    f_fd = np.empty((nn, 3))
    H_fd = np.empty((nn, nn, 3, 3))
    for b in range(nn):
        for k in range(3):
            xp, xm = x.copy(), x.copy()
            xp[b, k] += FD_STEP
            xm[b, k] -= FD_STEP
            ep, fp, _ = _terms(code, xp, dN, w)
            em, fm, _ = _terms(code, xm, dN, w)
            f_fd[b, k] = -(ep - em) / (2 * FD_STEP)
            H_fd[:, b, :, k] = (fp - fm) / (2 * FD_STEP)
    assert rel(f, f_fd) < FD_REL
    assert rel(H, H_fd) < FD_REL
    assert rel(H, H.transpose(1, 0, 3, 2)) < ROUNDOFF
    f2 = np.empty((nn, 3))
    e2 = el.element_terms(code, MU, LAM, x, dN, w, f2, np.empty((nn, nn, 3, 3)), False)  # repeated, no H
    assert e2 == e and np.array_equal(f2, f)


def test_shape_gradients_reject_bad_elements():
    X = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]])
    with pytest.raises(ModelError, match="element 7: rest element is inverted"):
        el.shape_gradients(X[[0, 2, 1, 3]], index=7)
    with pytest.raises(ModelError, match="degenerate"):
        el.shape_gradients(np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]]))
    with pytest.raises(ModelError, match="shape"):
        el.shape_gradients(X[:3])
    nodes, tets = ms.box_mesh((1, 1, 1), (1, 1, 1))
    tets[4] = tets[4][[0, 2, 1, 3]]
    with pytest.raises(ModelError, match="element 4"):
        el.precompute(nodes, tets)


def _interior(nodes, size):
    return np.all(np.abs(nodes) < 0.5 * np.asarray(size) - 1e-9, axis=1)


@pytest.mark.parametrize("code", CODES)
@pytest.mark.parametrize("element", ["tet4", "tet10"])
def test_patch_test(code, element):
    """x = A X + t: the same F = A and P at every quadrature point, and no net force on interior nodes."""
    size = (1.0, 0.8, 0.6)
    nodes, tets = ms.box_mesh(size, (3, 3, 2), element)
    dN, w = el.precompute(nodes, tets)
    A = np.eye(3) + 0.1 * np.random.default_rng(8).normal(size=(3, 3))
    x = nodes @ A.T + np.array([0.3, -0.2, 0.1])
    F = np.einsum("mai,mqaj->mqij", x[tets], dN)
    assert rel(F, np.broadcast_to(A, F.shape)) < ROUNDOFF
    P = np.array([_P(code, Fq) for Fq in F.reshape(-1, 3, 3)])
    assert rel(P, np.broadcast_to(_P(code, A), P.shape)) < ROUNDOFF
    energy, f, K = el.elastic_forces(code, MU, LAM, x, tets, dN, w)
    assert energy == pytest.approx(mat.psi(code, MU, LAM, A) * 0.48, rel=1e-12)
    inside = _interior(nodes, size)
    assert inside.sum() >= 4
    assert np.abs(f[inside]).max() < PATCH_REL * np.abs(f[~inside]).max()
    assert abs(K - K.T).max() < ROUNDOFF * abs(K).max()


@pytest.mark.parametrize("code", CODES)
@pytest.mark.parametrize("element", ["tet4", "tet10"])
def test_rigid_motion_is_free(code, element):
    nodes, tets = ms.box_mesh((1.0, 0.5, 0.5), (2, 1, 1), element)
    dN, w = el.precompute(nodes, tets)
    x = nodes @ _rotation(np.random.default_rng(9)).T + np.array([1.0, 2.0, -3.0])
    energy, f, _ = el.elastic_forces(code, MU, LAM, x, tets, dN, w)
    _, f_unit, _ = el.elastic_forces(code, MU, LAM, 2.0 * nodes, tets, dN, w)  # a unit strain
    assert abs(energy) < RIGID_REL * MU * w.sum()
    assert np.abs(f).max() < RIGID_REL * np.abs(f_unit).max()


def test_elastic_forces_stiffness_is_negative_semidefinite_at_rest():
    nodes, tets = ms.box_mesh((1.0, 0.5, 0.5), (2, 1, 1), "tet10")
    dN, w = el.precompute(nodes, tets)
    for code in CODES:
        _, f, K = el.elastic_forces(code, MU, LAM, nodes, tets, dN, w)
        assert np.abs(f).max() < ROUNDOFF
        lam = np.linalg.eigvalsh(K.toarray())
        assert lam.max() < ROUNDOFF * abs(lam).max() and np.sum(lam > -1e-9 * abs(lam).max()) == 6  # 6 rigid modes


# ------------------------------------------------------------------------------------------------------- meshes


def _volumes(nodes, tets):
    X = nodes[tets[:, :4]]
    return np.linalg.det(np.stack([X[:, 1] - X[:, 0], X[:, 2] - X[:, 0], X[:, 3] - X[:, 0]], axis=2)) / 6


def _check_surface(nodes, tets):
    """Closed, outward-oriented boundary: sum of area vectors 0, divergence-theorem volume = mesh volume."""
    tri = ms.surface_triangles(tets)
    X0, X1, X2 = nodes[tri[:, 0]], nodes[tri[:, 1]], nodes[tri[:, 2]]
    area = 0.5 * np.cross(X1 - X0, X2 - X0)
    assert np.abs(area.sum(axis=0)).max() < ROUNDOFF * np.abs(area).sum()
    volume = _volumes(nodes, tets).sum()
    assert np.sum(area * (X0 + X1 + X2) / 3) / 3 == pytest.approx(volume, rel=ROUNDOFF)
    edges = np.sort(np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]]), axis=1)
    assert np.all(np.unique(edges, axis=0, return_counts=True)[1] == 2)  # every edge in two triangles


def _check_tet10(nodes, tets):
    corners = np.unique(tets[:, :4])
    mids = np.unique(tets[:, 4:])
    assert corners.max() < mids.min()  # mid-edge nodes after the corners
    pairs = tets[:, el.EDGES]
    assert rel(nodes[tets[:, 4:]], 0.5 * (nodes[pairs[..., 0]] + nodes[pairs[..., 1]])) < ROUNDOFF
    assert mids.size == np.unique(np.sort(pairs.reshape(-1, 2), axis=1), axis=0).shape[0]  # one per edge: shared
    assert mids.size == nodes.shape[0] - corners.size


@pytest.mark.parametrize("element", ["tet4", "tet10"])
def test_box_mesh(element):
    size, div = (2.0, 0.5, 0.3), (4, 2, 3)
    nodes, tets = ms.box_mesh(size, div, element)
    assert tets.shape == (6 * 24, 4 if element == "tet4" else 10)
    assert rel(nodes.min(axis=0), -0.5 * np.array(size)) < ROUNDOFF
    assert rel(nodes.max(axis=0), 0.5 * np.array(size)) < ROUNDOFF
    v = _volumes(nodes, tets)
    assert v.min() > 0 and v.sum() == pytest.approx(0.3, rel=ROUNDOFF)
    assert el.precompute(nodes, tets)[1].sum() == pytest.approx(0.3, rel=ROUNDOFF)
    _check_surface(nodes, tets)
    if element == "tet10":
        _check_tet10(nodes, tets)
    assert el.lumped_masses(nodes, tets, 1000.0).sum() == pytest.approx(300.0, rel=ROUNDOFF)


@pytest.mark.parametrize("element", ["tet4", "tet10"])
def test_cylinder_mesh(element):
    """Volume: the inscribed n-gon prism, exactly; within 0.2% of pi r^2 h at ntheta = 64."""
    r, h = 0.5, 2.0
    for nr, nt, nz in [(1, 3, 1), (3, 16, 2), (2, 64, 1)]:
        nodes, tets = ms.cylinder_mesh((r, h), (nr, nt, nz), element)
        assert tets.shape[0] == 3 * nz * nt * (2 * nr - 1)
        v = _volumes(nodes, tets)
        polygon = 0.5 * nt * r * r * math.sin(2 * math.pi / nt) * h
        assert v.min() > 0 and v.sum() == pytest.approx(polygon, rel=ROUNDOFF)
        assert np.abs(nodes[:, 2]).max() == pytest.approx(h / 2) and np.hypot(nodes[:, 0], nodes[:, 1]).max() <= r
        _check_surface(nodes, tets)
        if element == "tet10":
            _check_tet10(nodes, tets)
        assert el.lumped_masses(nodes, tets, 2.0).sum() == pytest.approx(2.0 * polygon, rel=ROUNDOFF)
    assert v.sum() == pytest.approx(math.pi * r * r * h, rel=2e-3)


def test_mesh_argument_validation():
    for kwargs, match in [({"divisions": (1, 0, 1)}, "box_mesh: divisions must be three positive integers"),
                          ({"divisions": (1.5, 1, 1)}, "divisions"), ({"size": (1, -1, 1)}, "box_mesh: size"),
                          ({"size": (1, 1)}, "size"), ({"element": "hex8"}, "box_mesh: element")]:
        with pytest.raises(ModelError, match=match):
            ms.box_mesh(**kwargs)
    with pytest.raises(ModelError, match="cylinder_mesh: radius_height"):
        ms.cylinder_mesh((0.0, 1.0))
    with pytest.raises(ModelError, match="ntheta"):
        ms.cylinder_mesh((1.0, 1.0), (1, 2, 1))
    with pytest.raises(ModelError, match="lumped_masses: density"):
        el.lumped_masses(*ms.box_mesh(), 0.0)
    nodes, tets = ms.box_mesh()
    dN, w = el.precompute(nodes, tets)
    for args, match in [((2, nodes, tets, dN, w), "code"), ((0, nodes[:, :2], tets, dN, w), "x must be"),
                        ((0, nodes, tets, dN[:, :, :3], w), "do not match"), ((0, nodes[:5], tets, dN, w), "indices")]:
        with pytest.raises(ModelError, match=f"elastic_forces: {match}|{match}"):
            el.elastic_forces(args[0], MU, LAM, *args[1:])


def test_hrz_shares_integrate_the_quadratic_shape_functions():
    """Corner share 1/36, mid-edge share 4/27: int N_a^2 dV over the unit tetrahedron by a conical product rule
    (xi = u, eta = v (1 - u), zeta = w (1 - u)(1 - v), Jacobian (1 - u)^2 (1 - v); exact for these degrees)."""
    g, gw = np.polynomial.legendre.leggauss(6)
    g, gw = 0.5 * (g + 1), 0.5 * gw
    u, v, w = np.meshgrid(g, g, g, indexing="ij")
    weight = (gw[:, None, None] * gw[None, :, None] * gw[None, None, :]) * (1 - u) ** 2 * (1 - v)
    xi, eta, zeta = u, v * (1 - u), w * (1 - u) * (1 - v)
    L = [1 - xi - eta - zeta, xi, eta, zeta]
    N = [L[a] * (2 * L[a] - 1) for a in range(4)] + [4 * L[a] * L[b] for a, b in el.EDGES]
    assert np.sum(weight) == pytest.approx(1 / 6, rel=ROUNDOFF)
    assert np.sum(sum(N) * weight) == pytest.approx(1 / 6, rel=ROUNDOFF)  # partition of unity
    diag = np.array([np.sum(n * n * weight) for n in N])
    share = diag / diag.sum()
    assert share[:4] == pytest.approx([1 / 36] * 4, rel=ROUNDOFF) and share[4:] == pytest.approx([4 / 27] * 6)
    nodes, tets = ms.box_mesh((1, 1, 1), (1, 1, 1), "tet10")
    m = el.lumped_masses(nodes, tets[:1], 6.0)  # one element of volume 1/6, mass 1
    assert m[tets[0, :4]] == pytest.approx([1 / 36] * 4) and m[tets[0, 4:]] == pytest.approx([4 / 27] * 6)


# ------------------------------------------------------------------------------------------------- mesh files


def _fake_meshio(monkeypatch, points, cells):
    """A stand-in for meshio whose read() returns these points and (type, data) cell blocks."""
    blocks = [types.SimpleNamespace(type=kind, data=np.asarray(data)) for kind, data in cells]
    module = types.SimpleNamespace(read=lambda path: types.SimpleNamespace(points=np.asarray(points), cells=blocks))
    monkeypatch.setitem(sys.modules, "meshio", module)


def test_read_mesh(monkeypatch, tmp_path):
    path = tmp_path / "beam.msh"
    path.write_text("stand-in")
    nodes, tets = ms.box_mesh((1.0, 0.5, 0.5), (2, 1, 1))
    points = np.concatenate([[[9.0, 9.0, 9.0]], nodes])  # an unused node first: dropped, the rest renumbered
    cells = tets + 1
    cells[3] = cells[3][[0, 2, 1, 3]]  # one negatively oriented element: flipped
    _fake_meshio(monkeypatch, points, [("line", [[0, 1]]), ("tetra", cells)])
    X, T = ms.read_mesh(path)
    assert np.array_equal(X, nodes) and T.shape == tets.shape and _volumes(X, T).min() > 0
    assert np.array_equal(np.sort(T, axis=1), np.sort(tets, axis=1))
    X10, T10 = ms.read_mesh(path, element="tet10")
    _check_tet10(X10, T10)
    nodes10, tets10 = ms.box_mesh((1.0, 0.5, 0.5), (2, 1, 1), "tet10")
    flipped = tets10.copy()
    flipped[2] = flipped[2][ms._FLIP10]
    _fake_meshio(monkeypatch, nodes10, [("tetra10", flipped)])
    X, T = ms.read_mesh(path)
    assert np.array_equal(T, tets10)  # the flip of a tet10 keeps each mid-edge node on its edge
    X, T = ms.read_mesh(path, element="tet4")
    assert T.shape == (tets10.shape[0], 4) and X.shape[0] == np.unique(tets10[:, :4]).size
    _fake_meshio(monkeypatch, nodes, [("tetra", tets), ("tetra10", tets10)])
    with pytest.raises(ModelError, match="mixes tetra and tetra10"):
        ms.read_mesh(path)


def test_read_mesh_errors(monkeypatch, tmp_path):
    path = tmp_path / "surface.vtk"
    path.write_text("stand-in")
    nodes, tets = ms.box_mesh()
    _fake_meshio(monkeypatch, nodes, [("triangle", ms.surface_triangles(tets))])
    with pytest.raises(ModelError, match="surface.vtk.*no tetrahedra"):
        ms.read_mesh(path)
    _fake_meshio(monkeypatch, nodes, [("tetra", tets + 100)])
    with pytest.raises(ModelError, match="surface.vtk.*node indices"):
        ms.read_mesh(path)
    bad = nodes.copy()
    bad[0, 0] = np.nan
    _fake_meshio(monkeypatch, bad, [("tetra", tets)])
    with pytest.raises(ModelError, match="finite"):
        ms.read_mesh(path)
    flat = nodes.copy()
    flat[:, 2] = 0.0
    _fake_meshio(monkeypatch, flat, [("tetra", tets)])
    with pytest.raises(ModelError, match="degenerate"):
        ms.read_mesh(path)
    with pytest.raises(ModelError, match="no such file"):
        ms.read_mesh(tmp_path / "missing.msh")
    monkeypatch.setitem(sys.modules, "meshio", None)  # import fails
    with pytest.raises(ModelError, match=r"pip install redmax\[mesh\]"):
        ms.read_mesh(path)


# -------------------------------------------------------------------------------------------------- cantilever


def _cantilever(element, divisions, code):
    """Tip deflection (m) of a clamped beam under its weight: Newton on f_elastic(x) + f_gravity = 0."""
    L, b, young, poisson, rho, g = 1.0, 0.1, 1e8, 0.3, 1000.0, 9.81
    nodes, tets = ms.box_mesh((L, b, b), divisions, element)
    nodes[:, 0] += L / 2  # x in [0, L]
    dN, w = el.precompute(nodes, tets)
    f_gravity = np.zeros_like(nodes)
    f_gravity[:, 2] = -g * el.lumped_masses(nodes, tets, rho)
    mu, lam = mat.lame(young, poisson)
    free = np.repeat(nodes[:, 0] > 1e-9, 3)  # clamped at x = 0
    x = nodes.copy()
    for _ in range(10):
        _, f, K = el.elastic_forces(code, mu, lam, x, tets, dN, w)
        r = (f + f_gravity).ravel()[free]
        if np.abs(r).max() < 1e-7 * np.abs(f_gravity).max():
            break
        x.ravel()[free] -= spla.spsolve(K[free][:, free].tocsc(), r)
    else:
        raise AssertionError("Newton did not converge")
    tip = nodes[:, 0] > L - 1e-9
    return -np.mean(x[tip, 2] - nodes[tip, 2]), 1.5 * rho * g * L**4 / (young * b**2)


def test_cantilever_tip_deflection_matches_euler_bernoulli():
    """L = 1 m, b = c = 0.1 m, E = 1e8 Pa, nu = 0.3, rho = 1000 kg/m^3, g = 9.81 m/s^2, clamped at x = 0:
    Euler-Bernoulli 1.5 rho g L^4 / (E b^2) = 14.715 mm.  Measured with box_mesh divisions (10, 2, 2), tet10,
    co-rotated: 14.542 mm, ratio 0.988 (Timoshenko shear would add ~1%; the clamp's Poisson constraint stiffens);
    neo-Hookean 14.542 mm.  (tet4 locks: (40, 4, 4) gives only 0.79.)"""
    d, d_eb = _cantilever("tet10", (10, 2, 2), mat.CODE_COROTATED)
    assert abs(d / d_eb - 1.0) < EULER_BERNOULLI_REL
    d_nh, _ = _cantilever("tet10", (10, 2, 2), mat.CODE_NEOHOOKEAN)
    assert abs(d_nh / d - 1.0) < MATERIALS_AGREE_REL


@pytest.mark.parametrize("element, cell", [("tet4", "tetra"), ("tet10", "tetra10")])
def test_read_mesh_reads_what_meshio_writes(tmp_path, element, cell):
    """A real file: meshio writes a box mesh (VTU), read_mesh gives back the same nodes and elements."""
    import meshio

    nodes, tets = ms.box_mesh((0.3, 0.2, 0.1), (2, 1, 1), element=element)
    path = tmp_path / f"box_{element}.vtu"
    meshio.write(str(path), meshio.Mesh(nodes, [(cell, tets)]))
    n2, t2 = ms.read_mesh(str(path))
    np.testing.assert_allclose(n2, nodes, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(t2, tets)
