"""Constraints (RedMax paper §4): loop closures, equalities, prescribed motion, joint limits and contact.

One class per scene-file type (``[[constraints]]``, docs/scene-files.md), added with
``ModelBuilder.add_constraint``::

    b.add_constraint(rm.constraints.Loop([("b3", (0, 0, -5)), ("b4", (10, 0, 0))], name="loop"))
    b.add_constraint(rm.constraints.JointRatio(["j2", "j4"], -1.0, name="gears"))
    b.add_constraint(rm.constraints.PrescribedJoint("j1", rm.constraints.Sigmoid(7, 4.71, 0, 7), name="drive"))

Each constraint emits rows in one of four families (maximal/reduced x equality/inequality) with a position
value, an explicit time term and, after the solve, a reaction (:mod:`redmax.constraints.base`).  Hyper-reduced
coordinates (``ModelBuilder.couple``) are not constraints: they remove coordinates from the model's DOFs.
``joint_constraints`` (joints as constraints between free bodies) serves the maximal-coordinate mode.
"""

from redmax.constraints.base import Constraint
from redmax.constraints.closures import Loop, Point, Universal, Weld
from redmax.constraints.equalities import JointRatio, Linear
from redmax.constraints.joints import MAXIMAL_JOINT_KINDS, joint_constraints
from redmax.constraints.prescribed import PrescribedBody, PrescribedJoint, PrescribedPoint, PrescribedRate
from redmax.constraints.profiles import PROFILES, Constant, PiecewiseLinear, Profile, Sigmoid, Sinusoid, profile_from
from redmax.constraints.registry import CONSTRAINTS
from redmax.constraints.unilateral import Floor, Limit, SelfCollision

__all__ = ["CONSTRAINTS", "MAXIMAL_JOINT_KINDS", "PROFILES", "Constant", "Constraint", "Floor", "JointRatio", "Limit",
           "Linear", "Loop", "PiecewiseLinear", "Point", "PrescribedBody", "PrescribedJoint", "PrescribedPoint",
           "PrescribedRate",
           "Profile", "SelfCollision", "Sigmoid", "Sinusoid", "Universal", "Weld", "joint_constraints",
           "profile_from"]
