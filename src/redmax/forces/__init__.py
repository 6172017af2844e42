"""Applied forces with their stiffness (K = df/dq) and damping (D = -df/dqd) matrices, block-sparse.

From model fields: body damping, joint springs, joint damping.  Added with ``ModelBuilder.add_force``: point
forces, springs, cables, ground contact (maximal) and nonlinear joint springs and joint limits (reduced).
Gravity and the Coriolis terms are part of the equations of motion, not forces.
"""

from redmax.forces.base import BlockSparse, DofBlocks, Force, ForceOutput, ForceTerms
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
    "BlockSparse",
    "BodyDamping",
    "Cable",
    "Coriolis",
    "DofBlocks",
    "Force",
    "ForceOutput",
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
