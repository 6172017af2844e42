"""Locate robot descriptions of example-robot-data (through :mod:`redmax.io.robots`) and pybullet_data (test
extras) without importing them."""

from __future__ import annotations

import os
from importlib import metadata

from redmax.io.robots import ROBOTS as _ROBOTS
from redmax.io.robots import robot_path, robots_folder

ROBOTS = {name: robot.path for name, robot in _ROBOTS.items()}
"""Robot name -> path inside example-robot-data's ``robots`` folder (the table of :mod:`redmax.io.robots`)."""


def robots_root() -> str:
    """The ``robots`` folder of the installed example-robot-data distribution (FileNotFoundError when missing)."""
    root = robots_folder()
    if root is None:
        raise FileNotFoundError("example-robot-data is not installed (pip install '.[test]')")
    return root


def pybullet_root() -> str:
    """The data folder of the installed ``pybullet`` package (``pybullet_data``), found without importing it."""
    try:
        files = metadata.files("pybullet") or []
    except metadata.PackageNotFoundError:
        raise FileNotFoundError("pybullet is not installed (pip install pybullet)") from None
    for f in files:
        s = str(f)
        if s.startswith("pybullet_data/") and s.endswith(".urdf"):
            full = str(f.locate())
            return full[: full.index("pybullet_data/") + len("pybullet_data")]
    raise FileNotFoundError("pybullet has no pybullet_data folder")


def all_urdfs(random_urdfs: bool = False) -> list[tuple[str, str]]:
    """(label, path) of every URDF shipped by example-robot-data and pybullet_data (whichever is installed),
    sorted; pybullet's 1000 generated single-link objects (``random_urdfs/``) only when asked."""
    out = []
    for prefix, finder in (("erd", robots_root), ("pybullet", pybullet_root)):
        try:
            root = finder()
        except FileNotFoundError:
            continue
        for folder, _, names in os.walk(root):
            if not random_urdfs and "random_urdfs" in folder:
                continue
            for n in names:
                if n.endswith(".urdf"):
                    path = os.path.join(folder, n)
                    out.append((f"{prefix}:{os.path.relpath(path, root)}", path))
    return sorted(out)


def robot_urdf(name: str) -> str:
    """Path of the URDF of robot ``name`` (see :data:`redmax.io.robots.ROBOTS`; ModelError when not found)."""
    return robot_path(name)
