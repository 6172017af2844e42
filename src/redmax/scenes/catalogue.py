"""The registry of scene factories (:func:`register`): the authoring sources of the built-in scene files and the
parametric scenes built on load (:func:`redmax.scenes.load`)."""

from __future__ import annotations

from collections.abc import Callable

from redmax.errors import SceneError
from redmax.scene import Scene

__all__ = ["register"]

_AUTHORS: dict[str, tuple[Callable[[], Scene], str]] = {}  # the sources of the built-in scene files
_PARAMETRIC: dict[str, tuple[Callable[..., Scene], str, dict]] = {}  # name -> (factory, description, defaults)
_PARAM_TYPES = (bool, int, float, str)


def register(name: str, description: str, params: dict | None = None):
    """Decorator registering a scene factory under ``name``.

    Without ``params``: a zero-argument factory, the authoring source of a built-in scene file
    (``python -m redmax.scenes.generate`` writes it).  With ``params`` (``{name: default}``, each default a bool,
    int, float or str): a parametric scene, built on every :func:`load` by calling the factory with every parameter
    as a keyword (the defaults overridden by the caller's); ``parameters(name)`` lists them, ``redmax scenes`` shows
    them and ``redmax run NAME --param k=v`` sets them.  The Scene the factory returns records its parameters
    (``scene.params``), and a scene file saved from it keeps them (``[scene] params``).
    """
    if not isinstance(name, str) or not name.strip():
        raise SceneError(f"a scene is registered under a non-empty name, got {name!r}")
    if params is not None:
        if not isinstance(params, dict):
            raise SceneError(f"scene {name!r}: params must be a dict of name -> default, got "
                             f"{type(params).__name__}")
        for k, v in params.items():
            if not (isinstance(k, str) and k.isidentifier()):
                raise SceneError(f"scene {name!r}: parameter names must be identifiers, got {k!r}")
            if not isinstance(v, _PARAM_TYPES):
                raise SceneError(f"scene {name!r}: parameter {k!r} needs a default of type bool, int, float or str, "
                                 f"got {type(v).__name__}")

    def deco(fn):
        if params is None:
            _AUTHORS[name] = (fn, description)
        else:
            _PARAMETRIC[name] = (fn, description, dict(params))
        return fn

    return deco
