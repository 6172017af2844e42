"""Scenes: ``redmax.scenes.load("reference/05")`` (a built-in) or ``load("my_scene.toml")`` (a file).

A :class:`Scene` bundles a compiled Model with its default duration, step, integrator and solver
settings; ``scene.simulate(...)`` integrates it and returns a :class:`redmax.integrators.Result`.
The built-in catalogues are stored as scene files in ``redmax/scenes/data/<catalogue>/<id>.toml``;
they are generated from the definitions in ``reference.py`` and ``diff.py`` by
``python -m redmax.scenes.generate`` (a test checks that they are up to date).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources

from redmax.errors import SceneError
from redmax.integrators import Result, simulate

__all__ = ["Scene", "available", "builtin_path", "load", "register", "save"]

_AUTHORS: dict[str, tuple[Callable[[], Scene], str]] = {}


@dataclass
class Scene:
    """A model with its simulation settings.

    Attributes:
        name: e.g. "reference/05".  model: the compiled Model.  duration, dt: default simulated time
        and step (s).  integrator: "euler", "rk45" or "dop853".  method: "redmax" or "recursive" (ODE
        integrators).  rtol, atol: ODE tolerances.  symmetrize: Euler stiffness symmetrisation.
        description: one line.  forces: replacement force list (None: the model's forces).
    """

    name: str
    model: object
    duration: float = 2.0
    dt: float = 1e-2
    integrator: str = "euler"
    description: str = ""
    forces: list | None = None
    method: str = "redmax"
    rtol: float = 1e-8
    atol: float = 1e-8
    symmetrize: bool = False
    meta: dict = field(default_factory=dict)

    def simulate(self, integrator: str | None = None, dt: float | None = None, duration: float | None = None,
                 method: str | None = None, rtol: float | None = None, atol: float | None = None, state=None,
                 symmetrize: bool | None = None, progress=None) -> Result:
        """Simulate from the initial state (or ``state``); every argument defaults to the scene's setting.

        Args:
            integrator: "euler" (linearly implicit), "rk45" or "dop853".
            dt: step (euler) or sampling interval (ODE).  duration: simulated time.
            method: "redmax" or "recursive" (ODE integrators only).  rtol, atol: ODE tolerances.
            symmetrize: Euler only; symmetrise the stiffness matrices.
            progress: optional callable ``(t, t_end)`` called as the simulation advances.
        """
        res = simulate(self.model, state, integrator or self.integrator, self.dt if dt is None else dt,
                       self.duration if duration is None else duration, method or self.method,
                       self.rtol if rtol is None else rtol, self.atol if atol is None else atol, self.forces,
                       self.symmetrize if symmetrize is None else symmetrize, progress)
        res.meta["scene"] = self.name
        return res


def register(name: str, description: str):
    """Decorator registering a zero-argument scene factory (the authoring source of a built-in scene)."""

    def deco(fn):
        _AUTHORS[name] = (fn, description)
        return fn

    return deco


def _data_dir():
    return resources.files("redmax.scenes").joinpath("data")


def builtin_path(name: str) -> str:
    """Path of the scene file of built-in scene ``name`` (e.g. "reference/05")."""
    cat, _, num = name.partition("/")
    return str(_data_dir().joinpath(cat, f"{num}.toml"))


def _builtin_names() -> list[str]:
    out = []
    root = _data_dir()
    for cat in sorted(os.listdir(str(root))):
        d = os.path.join(str(root), cat)
        if os.path.isdir(d):
            out += [f"{cat}/{f[:-5]}" for f in os.listdir(d) if f.endswith(".toml")]
    return sorted(out, key=_sort_key)


def _sort_key(name: str):
    cat, _, num = name.partition("/")
    try:
        return (cat, int(num))
    except ValueError:
        return (cat, 10**6)


def available() -> dict[str, str]:
    """Names of the built-in scenes with their one-line descriptions (read from their files)."""
    import tomllib

    out = {}
    for name in _builtin_names():
        with open(builtin_path(name), "rb") as fh:
            out[name] = tomllib.load(fh).get("scene", {}).get("description", "")
    return out


def load(name_or_path) -> Scene:
    """Load a built-in scene by name (e.g. "reference/05", "reference/-1") or a scene file by path."""
    from redmax.io.scene_file import load_scene_file

    try:
        s = os.fspath(name_or_path)
    except TypeError:
        raise SceneError(f"a scene is a name or a path, got {name_or_path!r}") from None
    if isinstance(s, bytes):
        s = os.fsdecode(s)
    if s.endswith(".toml") or (os.sep in s and os.path.exists(s)):
        return load_scene_file(s)
    if s in _builtin_names():
        scene = load_scene_file(builtin_path(s))
        scene.name = s
        return scene
    raise SceneError(f"unknown scene {s!r}; give a .toml file or one of: {', '.join(_builtin_names())}")


def save(scene: Scene, path) -> str:
    """Write ``scene`` to a scene file (TOML); returns the path."""
    from redmax.io.scene_file import save_scene_file

    return save_scene_file(scene, path)
