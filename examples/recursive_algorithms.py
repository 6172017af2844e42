"""Inverse and forward dynamics, the joint-space inertia and its inverse, and a complex-step derivative.

Run: python examples/recursive_algorithms.py
"""

import numpy as np

import redmax as rm

model = rm.scenes.load("reference/02").model  # a branching tree of revolute joints
rng = np.random.default_rng(0)
q, qd, qdd = rng.normal(size=(3, model.ndof))

tau = rm.rnea(model, q, qd, qdd)  # inverse dynamics, O(n)
print("ABA(RNEA(qdd)) - qdd:", np.abs(rm.aba(model, q, qd, tau) - qdd).max())
M = rm.crba(model, q)  # joint-space inertia
print("M symmetric positive definite:", np.allclose(M, M.T), np.all(np.linalg.eigvalsh(M) > 0))
print("M^-1 M - I:", np.abs(rm.minv(model, q) @ M - np.eye(model.ndof)).max())
print("RedMax J^T Mm J - CRBA:", np.abs(rm.redmax_mass_matrix(model, q) - M).max())

# Hybrid dynamics: prescribe the acceleration of the first joint, get its torque.
prescribed = np.array([True, False, False, False])
qdd_h, tau_h = rm.hybrid_dynamics(model, q, qd, np.where(prescribed, 0, tau), np.where(prescribed, qdd, 0), prescribed)
print("hybrid reproduces tau and qdd:", np.allclose(tau_h, tau), np.allclose(qdd_h, qdd))

# The kernels are scalar-generic: complex step gives d tau / d q_0 to machine precision.
h = 1e-30
dq = np.zeros(model.ndof)
dq[0] = 1.0
print("d tau / d q0 (complex step):", rm.rnea(model, q + 1j * h * dq, qd, qdd).imag / h)
