"""Forces with their stiffness (K = df/dq) and damping (D = -df/dqd) matrices.

Built-in (from model fields): gravity, Coriolis, body damping, joint torques, joint springs, joint
damping.  Added with ``ModelBuilder.add_force``: point forces, springs, cables, ground contact
(maximal) and nonlinear joint springs and joint limits (reduced).
"""

from redmax.forces.base import Force, ForceTerms
from redmax.forces.builtin import (
    BodyDamping,
    Coriolis,
    Gravity,
    JointDamping,
    JointSpring,
    JointTorque,
    model_forces,
)
from redmax.forces.maximal import (
    Cable,
    GenericSpring,
    GroundContact,
    MultiPointSpring,
    PointSpring,
    SpringDamper,
    WorldPointForce,
)
from redmax.forces.points import PointForce
from redmax.forces.reduced import JointForce, JointLimit, NonlinearJointSpring

__all__ = [
    "BodyDamping",
    "Cable",
    "Coriolis",
    "Force",
    "ForceTerms",
    "GenericSpring",
    "Gravity",
    "GroundContact",
    "JointDamping",
    "JointForce",
    "JointLimit",
    "JointSpring",
    "JointTorque",
    "MultiPointSpring",
    "NonlinearJointSpring",
    "PointForce",
    "PointSpring",
    "SpringDamper",
    "WorldPointForce",
    "model_forces",
]
