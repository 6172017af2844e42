"""Locate robot descriptions of example-robot-data and pybullet_data (test extras) without importing them."""

from __future__ import annotations

import os
from importlib import metadata

ROBOTS = {
    # name: path inside example-robot-data's share/example-robot-data/robots folder
    "ur5": "ur_description/urdf/ur5_robot.urdf",
    "ur10": "ur_description/urdf/ur10_robot.urdf",
    "ur3": "ur_description/urdf/ur3_robot.urdf",
    "panda": "panda_description/urdf/panda.urdf",
    "kinova": "kinova_description/robots/kinova.urdf",
    "double_pendulum": "double_pendulum_description/urdf/double_pendulum.urdf",
    "z1": "z1_description/urdf/z1.urdf",
    "solo12": "solo_description/robots/solo12.urdf",
    "anymal": "anymal_b_simple_description/robots/anymal.urdf",
    "talos": "talos_data/robots/talos_reduced.urdf",
}


def robots_root() -> str:
    """The ``robots`` folder of the installed example-robot-data distribution."""
    try:
        files = metadata.files("example-robot-data") or []
    except metadata.PackageNotFoundError:
        raise FileNotFoundError("example-robot-data is not installed (pip install '.[test]')") from None
    for f in files:
        s = str(f)
        if s.endswith(".urdf") and "/robots/" in s:
            full = str(f.locate())
            return full[: full.index("/robots/") + len("/robots")]
    raise FileNotFoundError("example-robot-data has no URDF files")


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
    """Path of the URDF of robot ``name`` (see ROBOTS)."""
    path = os.path.join(robots_root(), ROBOTS[name])
    if not os.path.isfile(path):
        raise FileNotFoundError(path)
    return path
