"""Models: the frozen :class:`Model` (tree + DOF layout + elements), the packed layout the kernels read, and
inputs over time.

``model.model`` holds the data, ``model.layout`` the packed arrays of the kernels, ``model.inputs`` the joint torque
signals; nothing here imports the algorithms.  The builder that makes a Model is :class:`redmax.ModelBuilder`
(``redmax.builder``).
"""

from redmax.configuration import State
from redmax.model.inputs import Inputs, Schedule
from redmax.model.model import Defaults, DofLayout, Model, Tree

__all__ = ["Defaults", "DofLayout", "Inputs", "Model", "Schedule", "State", "Tree"]
