"""Exceptions raised by redmax.  Every message names the offending element (body, joint, field or file)."""

from __future__ import annotations

__all__ = ["ModelError", "RedmaxError", "RedmaxWarning", "SceneError", "SimulationError", "SimulationWarning"]


class RedmaxError(Exception):
    """Base class of every error redmax raises on purpose."""


class ModelError(RedmaxError, ValueError):
    """An invalid model: bad body, joint, placement, parameter, or state size.

    The message starts with the offending element, e.g. ``joint 'elbow': axis must be non-zero``.
    """


class SceneError(RedmaxError, ValueError):
    """A malformed scene file or scene request (unknown scene, bad field)."""


class SimulationError(RedmaxError, RuntimeError):
    """A simulation that cannot continue (singular system, non-finite state)."""


class RedmaxWarning(UserWarning):
    """A model accepted with a defect the user should know about (e.g. a URDF inertia that violates the triangle
    inequality, a mimic joint loaded as an independent joint).  The message names the element and the defect;
    turn warnings into errors with ``warnings.simplefilter("error", redmax.RedmaxWarning)`` or, for robot files,
    ``strict=True``."""


class SimulationWarning(RedmaxWarning):
    """A simulation that ran on but whose energy or rates grew beyond what the model can explain (an unstable
    step, ``redmax.integrators.instability``).  The message names the step, the time and the quantity.  Given
    once per run; ``on_instability="raise"`` turns it into a :class:`SimulationError`, ``"ignore"`` silences it."""
