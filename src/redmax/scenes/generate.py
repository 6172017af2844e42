"""Write the built-in scene files from their authoring definitions.

Run ``python -m redmax.scenes.generate`` after changing ``reference.py`` or ``diff.py``; the test suite
checks that the packaged files match these definitions.
"""

from __future__ import annotations

import os
import sys

from redmax.scenes import _AUTHORS, builtin_path, save


def authored() -> dict:
    """Import the authoring modules and return ``{name: (factory, description)}``."""
    from redmax.scenes import (  # noqa: F401  (the decorators register them)
        constrained,
        diff,
        friction,
        friction_reference,
        paper,
        reference,
    )

    return dict(_AUTHORS)


def build(name: str):
    """The Scene of built-in ``name`` built from its Python definition."""
    fn, desc = authored()[name]
    scene = fn()
    scene.name = name
    scene.description = desc
    return scene


def main() -> int:
    for name in authored():
        path = builtin_path(name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        save(build(name), path)
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
