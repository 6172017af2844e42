"""Built-in scenes: ``redmax.scenes.load("reference/05")`` returns a :class:`Scene`.

A Scene bundles a compiled Model with its default duration, time step and integrator, as specified in
the reference catalogue; ``scene.simulate(...)`` integrates it and returns a
:class:`redmax.integrators.Result`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from redmax.errors import SceneError
from redmax.integrators import Result, simulate

__all__ = ["Scene", "available", "load", "register"]

_REGISTRY: dict[str, tuple[Callable[[], Scene], str]] = {}


@dataclass
class Scene:
    """A model with its simulation settings.

    Attributes:
        name: catalogue name, e.g. "reference/05".  model: the compiled Model.
        duration: default simulated time (s).  dt: default step (s).
        integrator: default integrator ("euler").  description: one line.
        forces: extra or replacement forces (None: the model's built-in forces).
    """

    name: str
    model: object
    duration: float = 2.0
    dt: float = 1e-2
    integrator: str = "euler"
    description: str = ""
    forces: list | None = None
    meta: dict = field(default_factory=dict)

    def simulate(self, integrator: str | None = None, dt: float | None = None, duration: float | None = None,
                 method: str = "redmax", rtol: float = 1e-8, atol: float = 1e-8, state=None,
                 symmetrize: bool = False) -> Result:
        """Simulate from the initial state (or ``state``).

        Args:
            integrator: "euler" (linearly implicit), "rk45" or "dop853"; default the scene's.
            dt: step (euler) or sampling interval (ODE); default the scene's.
            duration: default the scene's.
            method: "redmax" or "recursive" (ODE integrators only).
            rtol, atol: ODE tolerances.
            symmetrize: Euler only; symmetrise the stiffness matrices.
        """
        res = simulate(self.model, state, integrator or self.integrator, self.dt if dt is None else dt,
                       self.duration if duration is None else duration, method, rtol, atol, self.forces, symmetrize)
        res.meta["scene"] = self.name
        return res


def register(name: str, description: str):
    """Decorator registering a zero-argument scene factory under ``name``."""

    def deco(fn):
        _REGISTRY[name] = (fn, description)
        return fn

    return deco


def available() -> dict[str, str]:
    """Names of the built-in scenes with their one-line descriptions."""
    _ensure_loaded()
    return {k: v[1] for k, v in sorted(_REGISTRY.items(), key=lambda kv: _sort_key(kv[0]))}


def _sort_key(name: str):
    cat, _, num = name.partition("/")
    try:
        return (cat, int(num))
    except ValueError:
        return (cat, 10**6)


def load(name: str) -> Scene:
    """Build the built-in scene ``name`` (e.g. "reference/05" or "reference/-1")."""
    _ensure_loaded()
    if name not in _REGISTRY:
        raise SceneError(f"unknown scene {name!r}; available: {', '.join(available())}")
    fn, desc = _REGISTRY[name]
    scene = fn()
    scene.name = name
    scene.description = desc
    return scene


def _ensure_loaded() -> None:
    from redmax.scenes import diff, reference  # noqa: F401  (register the catalogues)
