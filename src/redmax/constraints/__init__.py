"""Constraints: joint constraints for maximal-coordinate simulation (later: loops, equalities,
prescribed motion, limits, contact)."""

from redmax.constraints.joints import MAXIMAL_JOINT_KINDS, joint_constraints

__all__ = ["MAXIMAL_JOINT_KINDS", "joint_constraints"]
