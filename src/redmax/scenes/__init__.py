"""Scenes: ``redmax.scenes.load("reference/05")`` (a built-in), ``load("paper/bridge", n_deck=80)`` (a parametric
built-in) or ``load("my_scene.toml")`` (a file).

A :class:`Scene` bundles a compiled Model with its default duration, step, integrator and solver
settings; ``scene.simulate(...)`` integrates it and returns a :class:`redmax.integrators.Result`.
The built-in catalogues are stored as scene files in ``redmax/scenes/data/<catalogue>/<id>.toml``;
they are generated from the definitions in ``reference.py`` and ``diff.py`` by
``python -m redmax.scenes.generate`` (a test checks that they are up to date).  Parametric scenes
(:func:`register` with ``params``; the paper's scaling scenes of :mod:`redmax.scenes.scaling`) are built by their
factory on every load, with the keywords given to :func:`load` over their defaults.
"""

from __future__ import annotations

import math
import numbers
import os
from importlib import resources

from redmax.errors import SceneError
from redmax.io.scene_file import load_scene_file, save_scene_file
from redmax.scene import Scene
from redmax.scenes.catalogue import _AUTHORS, _PARAMETRIC, register

__all__ = ["ROBOT_PREFIX", "Scene", "available", "builtin_path", "load", "parameters", "register", "save"]


def _parametric() -> dict:
    """The parametric scenes (the built-in ones registered on first use)."""
    from redmax.scenes import deformable, friction, scaling  # noqa: F401  (their decorators register them)

    return _PARAMETRIC


def parameters(name: str) -> dict:
    """``{parameter: default}`` of scene ``name`` (empty for a scene without parameters)."""
    entry = _parametric().get(name)
    if entry is None:
        if name in _builtin_names() or name in _AUTHORS:
            return {}
        raise SceneError(f"unknown scene {name!r}; one of: {', '.join(_all_names())}")
    return dict(entry[2])


def _coerce(scene: str, key: str, value, default):
    """``value`` as the type of the parameter's ``default``; SceneError naming the parameter otherwise."""
    want = type(default)
    bad = SceneError(f"scene {scene!r}: parameter {key!r} expects {want.__name__} (default {default!r}), got "
                     f"{value!r}")
    if want is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
            return value.lower() in ("true", "1", "yes")
        raise bad
    if want is str:
        if isinstance(value, str):
            return value
        raise bad
    if isinstance(value, str):  # from the command line or a file
        try:
            value = int(value) if want is int else float(value)
        except ValueError:
            raise bad from None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise bad
    if want is int:
        if isinstance(value, numbers.Integral):
            return int(value)
        if math.isfinite(value) and float(value).is_integer():
            return int(value)
        raise bad
    value = float(value)
    if not math.isfinite(value):
        raise SceneError(f"scene {scene!r}: parameter {key!r} must be finite, got {value!r}")
    return value


def _build_parametric(name: str, given: dict) -> Scene:
    fn, desc, defaults = _parametric()[name]
    unknown = [k for k in given if k not in defaults]
    if unknown:
        valid = ", ".join(defaults) if defaults else "none"
        raise SceneError(f"scene {name!r} has no parameter {unknown[0]!r}; its parameters: {valid}")
    values = {k: _coerce(name, k, given.get(k, d), d) for k, d in defaults.items()}
    scene = fn(**values)
    if not isinstance(scene, Scene):
        raise SceneError(f"scene {name!r}: its factory returned {type(scene).__name__}, not a Scene")
    scene.name = name
    if not scene.description:
        scene.description = desc
    scene.params = values
    return scene


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
        return (cat, int(num), "")
    except ValueError:
        return (cat, 10**6, num)


def _all_names() -> list[str]:
    return sorted({*_builtin_names(), *_parametric(), *_AUTHORS}, key=_sort_key)


def available() -> dict[str, str]:
    """Names of the built-in scenes (files and parametric scenes) and of the scenes registered in this process,
    with their one-line descriptions (:func:`parameters` lists a scene's parameters)."""
    import tomllib

    out = {}
    files = set(_builtin_names())
    for name in _all_names():
        if name in _PARAMETRIC:
            out[name] = _PARAMETRIC[name][1]
        elif name in files:
            with open(builtin_path(name), "rb") as fh:
                out[name] = tomllib.load(fh).get("scene", {}).get("description", "")
        else:
            out[name] = _AUTHORS[name][1]
    return out


ROBOT_PREFIX = "robot:"
"""``load("robot:panda")``: robot ``panda`` of example-robot-data (:func:`redmax.load_robot`), as a URDF file."""


def load(name_or_path, **params) -> Scene:
    """Load a built-in scene by name (e.g. "reference/05", "reference/-1"), a scene file by path (``.toml``), a
    robot file: MJCF (``.xml``, needs the ``mujoco`` extra) or URDF (``.urdf``), or a robot of example-robot-data by
    name (``"robot:panda"``, see :func:`redmax.available_robots`); robots are simulated for 1 s by default.

    ``params``: the parameters of a parametric scene (:func:`parameters`; e.g. ``load("paper/bridge", n_deck=80)``);
    an unknown name or a value of the wrong type raises :class:`redmax.errors.SceneError` naming the parameter.
    A scene file saved from a parametric scene loads as a file (its ``[scene] params`` are kept for the record)."""
    try:
        s = os.fspath(name_or_path)
    except TypeError:
        raise SceneError(f"a scene is a name or a path, got {name_or_path!r}") from None
    if isinstance(s, bytes):
        s = os.fsdecode(s)
    if s in _parametric():
        return _build_parametric(s, params)
    if params:
        raise SceneError(f"scene {s!r} has no parameters (got {', '.join(params)}); parametric scenes: "
                         f"{', '.join(sorted(_parametric()))}")
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
    if s in _AUTHORS:  # registered in this process, with no file
        scene = _AUTHORS[s][0]()
        scene.name = s
        return scene
    raise SceneError(f"unknown scene {s!r}; give a .toml file or one of: {', '.join(_all_names())}")


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
