"""Forces with their stiffness (K = df/dq) and damping (D = -df/dqd) matrices."""

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

__all__ = [
    "BodyDamping",
    "Coriolis",
    "Force",
    "ForceTerms",
    "Gravity",
    "JointDamping",
    "JointSpring",
    "JointTorque",
    "model_forces",
]
