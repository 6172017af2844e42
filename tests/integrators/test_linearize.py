"""The step forms its system from the forces' own (f, K, D) (redmax.integrators._linearize).

The force kernels get no step coefficients; the integrator combines ``B = cK K + cD D`` and ``f + D v``.  For forces
that are linear in the velocities (springs with dampers, cables, joint and body damping, joint limits), ``f + D v``
is the force at the same positions with zero velocities: an independent check of the right-hand side.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import redmax as rm
from redmax.forces import maximal as fm
from redmax.forces.reduced import JointLimit
from redmax.spatial import trans


def _model():
    b = rm.ModelBuilder("linearize", gravity=(0, 0, -980))
    b.add_body("b0", rm.Cuboid(4, 1, 1), rm.Revolute((0, 1, 0)), body_placement=trans(2, 0, 0), q=[0.3],
               qd=[1.2], damping=0.7, stiffness=50.0, joint_damping=3.0)
    b.add_body("b1", rm.Cuboid(4, 1, 1), rm.SphericalExp(), parent="b0", joint_placement=trans(4, 0, 0),
               body_placement=trans(2, 0, 0), q=[0.2, -0.1, 0.4], qd=[0.5, -2.0, 1.0], damping=0.4)
    b.add_body("b2", rm.Cuboid(4, 1, 1), rm.Prismatic((1, 0, 0)), parent="b1", joint_placement=trans(4, 0, 0),
               body_placement=trans(2, 0, 0), q=[0.5], qd=[-0.8], joint_damping=2.0)
    # a pair record in the step, and (stiffness "full") 6x6 blocks
    b.add_force(fm.PointSpring(("b0", (1, 0.5, 0)), ("b2", (0, 0.5, 0.5)), 30.0, 2.5, name="s1"))
    b.add_force(fm.PointSpring(("b1", (0, 0, 0.5)), (None, (3, 1, 2)), 20.0, 1.5, name="s2", stiffness="full"))
    b.add_force(fm.SpringDamper(("b0", (0, 0, 0.5)), ("b2", (1, 0, 0)), 40.0, 3.0, rest_length=2.0))
    b.add_force(fm.Cable([("b0", (0, 0.5, 0)), ("b1", (0, 0.5, 0)), ("b2", (0, 0.5, 0))], 60.0, 4.0,
                         rest_length=1.0))
    b.add_force(JointLimit("b2", lower=[-0.2], upper=[0.1], stiffness=500.0, damping=6.0))
    return b.build()


def _forces_and_system(model, qd, h, pairs):
    """(fw, fr, fw_rhs, fr_rhs, rdiag, bB, bK, bD, nblk) of the compiled forces at (q0, qd)."""
    from redmax._kernels.workspace import work_offsets
    from redmax.forces._compiled import NE, PAIR_FLOATS
    from redmax.forces.registry import eval_forces
    from redmax.integrators._linearize import linearize_forces
    from redmax.integrators._stages import kinematics_stage
    from redmax.integrators.euler_parts import resolve_forces
    from redmax.integrators.step import StepOptions

    program, python, _ = resolve_forces(model, None, StepOptions())
    assert program is not None and not python
    Ii, Ff = model.packed
    nb, n = model.nb, model.ndof
    o = work_offsets(nb, n)
    W = np.zeros(o.size)
    q = np.array(model.q0, dtype=float)
    qd = np.array(qd, dtype=float)
    kinematics_stage(Ii, Ff, q, qd, np.array(model.jstate0, dtype=np.int64), W)
    Rw, pw = W[o.wR:o.wR + 9 * nb].reshape(nb, 9), W[o.wp:o.wp + 3 * nb].reshape(nb, 3)
    Vw = W[o.wV:o.wV + 6 * nb].reshape(nb, 6)
    cap, cp = max(program.nblocks, 1), max(program.npairs, 1)
    bp, bK, bD, bB = np.zeros((cap, 2), np.int64), *np.zeros((3, cap, 6, 6))
    pp, pr = np.zeros((cp, 2), np.int64), np.zeros((cp, PAIR_FLOATS))
    fw, fw_rhs = np.zeros((2, nb, 6))
    fr, fr_rhs, rK, rD, rdiag = np.zeros((5, n))
    nblk, npair = eval_forces(program.hdr, program.fi, program.ff, Rw, pw, Vw, q, qd, True, fw, bp, bK, bD, fr, rK,
                              rD, np.zeros(NE), np.zeros(program.nscratch), pp, pr, pairs)
    assert (npair > 0) == pairs
    linearize_forces(-h * h, h, nblk, npair, bp, bK, bD, bB, rK, rD, rdiag, fw, fw_rhs, fr, fr_rhs, Vw, qd, pp, pr)
    return fw, fr, fw_rhs, fr_rhs, rdiag, bB[:nblk], bK[:nblk], bD[:nblk], rK, rD


@pytest.mark.parametrize("pairs", [False, True], ids=["blocks", "pair-records"])
def test_f_plus_D_v_is_the_force_at_rest_for_forces_linear_in_the_velocities(pairs):
    model = _model()
    h = 1e-3
    qd = np.array(model.qd0, dtype=float)
    assert np.abs(qd).min() > 0
    fw, _, fw_rhs, fr_rhs, rdiag, bB, bK, bD, rK, rD = _forces_and_system(model, qd, h, pairs)
    fw0, fr0, *_ = _forces_and_system(model, np.zeros_like(qd), h, pairs)
    assert np.abs(fw - fw0).max() > 1e-3 * np.abs(fw0).max()  # the dampers act at this state
    scale = np.abs(fw0).max()
    assert np.abs(fw_rhs - fw0).max() < 1e-12 * scale
    assert np.abs(fr_rhs - fr0).max() < 1e-12 * max(np.abs(fr0).max(), 1.0)
    # the step's combination of the forces' own K and D
    assert np.array_equal(bB, -h * h * bK + h * bD)
    assert np.array_equal(rdiag, -h * h * rK + h * rD)
    assert np.any(rK) and np.any(rD)


def test_force_kernels_take_no_step_coefficients():
    """Issue 49 item 3: the compiled force kernels know nothing of the step."""
    from redmax.forces._points import map_point_law
    from redmax.forces.base import KERNEL_SIGNATURE
    from redmax.forces.registry import FORCE_TYPES, eval_forces

    assert not set(KERNEL_SIGNATURE.split(", ")) & {"cK", "cD", "h", "fw_rhs", "fr_rhs", "rdiag", "rhs_on"}
    for kernel in (eval_forces, map_point_law, *{c.kernel for c in FORCE_TYPES}):
        params = set(inspect.signature(kernel.py_func).parameters)
        assert not params & {"cK", "cD", "h", "fw_rhs", "fr_rhs", "rdiag", "rhs_on"}, kernel.py_func.__name__


def test_a_force_output_with_the_old_fifth_argument_warns_and_is_still_integrated():
    from redmax.forces import ForceOutput
    from redmax.forces.terms import DofBlocks

    with pytest.warns(DeprecationWarning, match="f_rhs"):
        out = ForceOutput("reduced", np.ones(2), DofBlocks(2), DofBlocks(2), np.ones(2), 0.5)
    assert out.f_rhs is None and out.energy == 0.5
