"""redmax: exact, fast and differentiable dynamics of articulated rigid bodies."""

from redmax.errors import ModelError, RedmaxError, SceneError, SimulationError

__version__ = "0.1.0"

__all__ = ["ModelError", "RedmaxError", "SceneError", "SimulationError", "__version__"]
