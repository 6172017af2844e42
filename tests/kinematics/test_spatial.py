"""Spatial algebra against the matrix exponential/logarithm, finite differences and identities."""

import numpy as np
import pytest
import scipy.linalg as sl

from redmax import spatial as sp

from tolerances import CS_REL, CS_STEP, FD_REL, FD_STEP, ROUNDOFF

rng = np.random.default_rng(1234)


def hat6(phi):
    X = np.zeros((4, 4), dtype=phi.dtype)
    X[:3, :3] = sp.skew(phi[:3])
    X[:3, 3] = phi[3:]
    return X


def test_skew_unskew_cross():
    a, b = rng.normal(size=3), rng.normal(size=3)
    assert np.allclose(sp.skew(a) @ b, np.cross(a, b), rtol=0, atol=ROUNDOFF)
    assert np.allclose(sp.unskew(sp.skew(a)), a, rtol=0, atol=ROUNDOFF)


@pytest.mark.parametrize("angle", [0.0, 1e-12, 1e-7, 1e-3, 0.4, 1.0, 2.5, np.pi - 1e-6, np.pi - 1e-3, np.pi])
def test_exp_log_so3_against_expm(angle):
    for seed in range(5):  # own seeds: the axes do not depend on which tests ran before in this process
        n = np.random.default_rng(seed).normal(size=3)
        n /= np.linalg.norm(n)
        _check_exp_log_so3(angle * n, angle)


def _check_exp_log_so3(w, angle):
    R = sp.exp_so3(w)
    assert np.abs(R - sl.expm(sp.skew(w))).max() < 1e-14
    assert np.abs(R.T @ R - np.eye(3)).max() < 1e-14
    wl = sp.log_so3(R)
    # near pi the axis comes from R + R^T - ..., whose round-off grows like eps / (pi - angle)
    assert np.abs(sp.exp_so3(wl) - R).max() < (1e-14 if angle < 3.0 else 1e-13)
    if angle < np.pi - 1e-9:
        assert np.abs(wl - w).max() < 1e-9 * max(1.0, angle) + 1e-15
        # compare with scipy's logm where it is well conditioned
        if 1e-3 < angle < 3.0:
            assert np.abs(sp.skew(wl) - sl.logm(R).real).max() < 1e-12
    else:
        assert np.linalg.norm(wl) == pytest.approx(np.pi, abs=1e-6)


@pytest.mark.parametrize("scale", [0.0, 1e-8, 0.3, 2.0, np.pi - 1e-5])
def test_exp_log_se3_against_expm(scale):
    phi = rng.normal(size=6)
    phi[:3] *= scale / np.linalg.norm(phi[:3])
    E = sp.exp_se3(phi)
    assert np.abs(E - sl.expm(hat6(phi))).max() < 1e-13
    assert np.abs(sp.log_se3(E) - phi).max() < 1e-8
    assert np.abs(sp.exp_se3(sp.log_se3(E)) - E).max() < 1e-13


def test_inverse_and_compose():
    A = sp.exp_se3(rng.normal(size=6))
    B = sp.exp_se3(rng.normal(size=6))
    assert np.abs(sp.inv_se3(A) - np.linalg.inv(A)).max() < ROUNDOFF
    assert np.abs(sp.compose(A, B) - A @ B).max() < ROUNDOFF


def test_adjoint_identities():
    A = sp.exp_se3(rng.normal(size=6))
    B = sp.exp_se3(rng.normal(size=6))
    x, y = rng.normal(size=6), rng.normal(size=6)
    assert np.abs(sp.Ad(A @ B) - sp.Ad(A) @ sp.Ad(B)).max() < ROUNDOFF
    assert np.abs(sp.Ad(sp.inv_se3(A)) - np.linalg.inv(sp.Ad(A))).max() < ROUNDOFF
    # Ad(E) [x] E^-1 = [Ad(E) x]  (definition of the adjoint)
    assert np.abs(A @ hat6(x) @ np.linalg.inv(A) - hat6(sp.Ad(A) @ x)).max() < 1e-12
    # ad(x) y = [x, y] (matrix commutator) and the vector forms
    assert np.abs(hat6(sp.ad(x) @ y) - (hat6(x) @ hat6(y) - hat6(y) @ hat6(x))).max() < ROUNDOFF
    assert np.abs(sp.adv(x, y) - sp.ad(x) @ y).max() < ROUNDOFF
    assert np.abs(sp.adT(x, y) - sp.ad(x).T @ y).max() < ROUNDOFF
    # Ad(E) ad(x) Ad(E)^-1 = ad(Ad(E) x)
    assert np.abs(sp.Ad(A) @ sp.ad(x) @ np.linalg.inv(sp.Ad(A)) - sp.ad(sp.Ad(A) @ x)).max() < 1e-12


def test_addot_finite_difference():
    E = sp.exp_se3(rng.normal(size=6))
    phi = rng.normal(size=6)
    h = FD_STEP
    fd = (sp.Ad(E @ sp.exp_se3(h * phi)) - sp.Ad(E @ sp.exp_se3(-h * phi))) / (2 * h)
    assert np.abs(sp.Addot(E, phi) - fd).max() < FD_REL * max(1.0, np.abs(fd).max())


def test_right_jacobian_finite_difference_and_complex_step():
    w = rng.normal(size=3)
    R = sp.exp_so3(w)
    Jr = sp.right_jacobian_so3(w)
    for k in range(3):
        e = np.zeros(3)
        e[k] = 1.0
        dR = (sp.exp_so3(w + FD_STEP * e) - sp.exp_so3(w - FD_STEP * e)) / (2 * FD_STEP)
        assert np.abs(sp.unskew(R.T @ dR) - Jr[:, k]).max() < FD_REL
        dRc = sp.exp_so3(w.astype(complex) + 1j * CS_STEP * e).imag / CS_STEP
        assert np.abs(sp.unskew(R.T @ dRc) - Jr[:, k]).max() < CS_REL


def test_point_jacobian_and_inertia_transform():
    r = rng.normal(size=3)
    phi = rng.normal(size=6)
    assert np.abs(sp.Gamma(r) @ phi - (np.cross(phi[:3], r) + phi[3:])).max() < ROUNDOFF
    M = sp.spatial_inertia(2.0, np.array([1.0, 2.0, 2.5]))
    E = sp.exp_se3(rng.normal(size=6))
    Ma = sp.inertia_transform(M, E)
    # kinetic energy is frame independent: twist in a maps to Ad(E) twist in b
    va = rng.normal(size=6)
    vb = sp.Ad(E) @ va
    assert va @ Ma @ va == pytest.approx(vb @ M @ vb, rel=1e-13)
    assert np.abs(Ma - Ma.T).max() < ROUNDOFF


def test_python_constructors():
    assert np.allclose(sp.rot_x(0.3), sl.expm(sp.skew(np.array([0.3, 0, 0]))))
    assert np.allclose(sp.trans(1, 2, 3)[:3, 3], [1, 2, 3])
    with pytest.raises(ValueError):
        sp.rot_axis_angle((0, 0, 0), 1.0)


def test_solve3_is_a_linear_solve_that_never_raises():
    """spatial.solve3 (the 3x3 solve of the spherical joints' re-parameterisation): equals numpy's solve, is
    complex-step differentiable, and returns non-finite values instead of raising on a singular matrix."""
    from redmax.spatial import solve3

    rng = np.random.default_rng(3)
    for _ in range(20):
        A = rng.normal(size=(3, 3))
        b = rng.normal(size=3)
        x = np.empty(3)
        det = solve3(A, b, x)
        assert abs(det - np.linalg.det(A)) <= 1e-12 * max(1.0, abs(det))
        assert np.abs(x - np.linalg.solve(A, b)).max() <= 1e-10 * np.linalg.cond(A) * max(1.0, np.abs(x).max())
        dA = rng.normal(size=(3, 3))
        xc = np.empty(3, dtype=complex)
        solve3(A + 1e-30j * dA, b.astype(complex), xc)
        # d x = -A^-1 dA x
        assert np.abs(xc.imag / 1e-30 + np.linalg.solve(A, dA @ x)).max() <= 1e-8 * np.linalg.cond(A) ** 2
    x = np.empty(3)
    assert solve3(np.ones((3, 3)), np.ones(3), x) == 0.0
    assert not np.isfinite(x).all()
