"""``redmax view SOURCE``: the viewer in the browser (:mod:`redmax.viz.viewer`), or its page as one HTML file.

SOURCE is a scene (built-in name, scene file), a robot file (URDF, MJCF) or ``robot:NAME``, simulated with its
defaults (a robot file is shown at rest in its initial configuration), or a results file ``.npz`` written by
``redmax run --out`` (its scene is loaded by the name the file records).
"""

from __future__ import annotations

import os

import numpy as np

from redmax.errors import RedmaxError

__all__ = ["add_parser", "run"]

_ROBOT_FILES = (".urdf", ".xml")


def add_parser(sub) -> None:
    v = sub.add_parser("view", help="show a scene, a robot or a results file in the browser (or as one HTML file)")
    v.add_argument("source", help="built-in scene, scene file (.toml), robot file (.urdf, MJCF .xml), robot:NAME, "
                                  "or a results file (.npz) of `redmax run --out`")
    v.add_argument("--port", type=int, help="port on localhost (default: a free one)")
    v.add_argument("--html", metavar="FILE.html", help="write the self-contained page instead of serving it")
    v.add_argument("--duration", type=float, help="simulated time in seconds; default: the scene's")
    v.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help="a scene parameter")


def _static(model):
    """A two-sample Result of the model at rest in its initial configuration (for robot files)."""
    from redmax.integrators.common import Result

    q = np.array([model.q0, model.q0], dtype=float)
    js = np.array([model.jstate0, model.jstate0])
    res = Result(np.array([0.0, 1.0]), q, np.zeros_like(q), js, {}, {"scene": model.name})
    res.model = model
    return res


def _load(a):
    """The scene of ``a.scene`` with its --param values."""
    from redmax import scenes

    params = {}
    for item in a.param:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise RedmaxError(f"--param {item}: expected NAME=VALUE")
        params[key.strip()] = value.strip()
    return scenes.load(a.scene, **params)


def _result(a):
    from redmax import scenes

    src = a.source
    if src.lower().endswith(".npz"):
        from redmax.integrators.common import Result

        if not os.path.isfile(src):
            raise RedmaxError(f"view {src}: no such file")
        with np.load(src) as f:
            name = str(f["scene"]) if "scene" in f else ""
            if not name:
                raise RedmaxError(f"view {src}: the file records no scene name; view the scene instead")
            energy = {k[len("energy_"):]: f[k] for k in f.files if k.startswith("energy_")}
            res = Result(f["t"], f["q"], f["qdot"], f["jstate"], energy, {"scene": name})
        res.model = scenes.load(name).model
        if res.q.shape[1] != res.model.ndof:
            raise RedmaxError(f"view {src}: q has {res.q.shape[1]} columns, scene {name!r} has {res.model.ndof} DOFs")
        return res
    a.scene = src
    s = _load(a)
    if src.lower().endswith(_ROBOT_FILES) or src.startswith("robot:"):
        return _static(s.model)
    res = s.simulate(duration=a.duration)
    res.model = s.model
    return res


def run(a) -> int:
    from redmax.viz.viewer import page, serve

    if a.html is not None:
        folder = os.path.dirname(os.path.abspath(a.html))
        if not a.html.lower().endswith(".html"):
            raise RedmaxError(f"--html {a.html}: expected a file name ending in .html")
        if not os.path.isdir(folder):
            raise RedmaxError(f"--html {a.html}: folder {folder} does not exist")
    if a.duration is not None and not a.duration > 0:
        raise RedmaxError(f"--duration must be positive, got {a.duration}")
    res = _result(a)
    if a.html:
        info = page(res.model, res, a.html)
        print(f"wrote page {a.html} ({info['bytes'] / 1e6:.1f} MB, {info['frames']} frames)")
        return 0
    serve(res.model, res, port=a.port, announce=lambda url: print(f"serving {url} (Ctrl-C stops)", flush=True))
    return 0
