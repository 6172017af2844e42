"""Models: the frozen :class:`Model` (tree + DOF layout + elements), its builder, and inputs over time.

``model.model`` holds the data (imports nothing above the joints), ``model.builder`` the builder (sits above
the dynamics layer, which it uses to validate), ``model.inputs`` the joint torque signals.
"""

from redmax.configuration import State
from redmax.model.builder import ModelBuilder
from redmax.model.inputs import Inputs, Schedule
from redmax.model.model import Defaults, DofLayout, Model, Tree

__all__ = ["Defaults", "DofLayout", "Inputs", "Model", "ModelBuilder", "Schedule", "State", "Tree"]
