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
from importlib import resources

from redmax.errors import SceneError
from redmax.io.scene_file import load_scene_file, save_scene_file
from redmax.scene import Scene

__all__ = ["ROBOT_PREFIX", "Scene", "available", "builtin_path", "load", "register", "save"]

_AUTHORS: dict[str, tuple[Callable[[], Scene], str]] = {}


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


ROBOT_PREFIX = "robot:"
"""``load("robot:panda")``: robot ``panda`` of example-robot-data (:func:`redmax.load_robot`), as a URDF file."""


def load(name_or_path) -> Scene:
    """Load a built-in scene by name (e.g. "reference/05", "reference/-1"), a scene file by path (``.toml``), a
    robot file: MJCF (``.xml``, needs the ``mujoco`` extra) or URDF (``.urdf``), or a robot of example-robot-data by
    name (``"robot:panda"``, see :func:`redmax.available_robots`); robots are simulated for 1 s by default."""
    try:
        s = os.fspath(name_or_path)
    except TypeError:
        raise SceneError(f"a scene is a name or a path, got {name_or_path!r}") from None
    if isinstance(s, bytes):
        s = os.fsdecode(s)
    low = s.lower()
    if low.startswith(ROBOT_PREFIX):
        from redmax.io.robots import robot_path

        return _robot_scene(robot_path(s[len(ROBOT_PREFIX):]), name=s)
    if low.endswith((".xml", ".urdf")):
        return _robot_scene(s)
    if low.endswith(".toml") or (os.sep in s and os.path.exists(s)):
        return load_scene_file(s)
    if s in _builtin_names():
        scene = load_scene_file(builtin_path(s), check_regular=False)  # (tests/scenes: each is regular)
        scene.name = s
        return scene
    raise SceneError(f"unknown scene {s!r}; give a .toml file or one of: {', '.join(_builtin_names())}")


def _robot_scene(path: str, name: str | None = None) -> Scene:
    """A Scene named ``name`` (default: the path) of an MJCF (``.xml``, compiled by MuJoCo: its timestep) or URDF
    file (fixed base, dt 1 ms), simulated from the file's initial configuration for 1 s with linearly implicit
    Euler."""
    if path.lower().endswith(".xml"):
        from redmax.io.mjcf import load_mjcf

        model = load_mjcf(path)
        dt, kind = model.meta["timestep"], "MJCF model (compiled by MuJoCo)"
    else:
        from redmax.io.urdf import load_urdf

        model = load_urdf(path)
        dt, kind = 1e-3, "URDF robot (fixed base)"
    return Scene(path if name is None else name, model, duration=1.0, dt=dt, integrator="euler",
                 description=f"{kind} {model.name}")


def save(scene: Scene, path) -> str:
    """Write ``scene`` to a scene file (TOML); returns the path."""
    return save_scene_file(scene, path)
