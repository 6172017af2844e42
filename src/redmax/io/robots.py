"""Robots by name: the URDF files of the example-robot-data distribution.

``load_robot("panda")`` finds ``panda_description/urdf/panda.urdf`` in the installed example-robot-data
distribution (``pip install example-robot-data``) and loads it with :func:`redmax.load_urdf`, passing its keyword
arguments through (``floating_base=``, ``gravity=``, ``meshes=``, ``strict=``, ``mimic=``...).  The distribution
ships its files as data (``share/example-robot-data/robots`` inside the distribution, no importable module); they
are located through the distribution's file list (:mod:`importlib.metadata`), so nothing of it is imported.

Every name maps to one URDF file (:data:`ROBOTS`); :func:`available_robots` lists the names whose file is
installed, with a one-line description each.  As with ``load_urdf``: units are SI, the base is fixed to the world
unless ``floating_base=True`` (legged robots, humanoids and flying robots usually want it), links joined by fixed
joints are merged, and defects the file's inertias have are reported as :class:`redmax.RedmaxWarning`.

Errors are :class:`redmax.ModelError`: an unknown name (with the closest names), example-robot-data not
installed (with the command to install it), or a name whose file this version of the distribution lacks.
"""

from __future__ import annotations

import difflib
import inspect
import os
from importlib import metadata
from types import MappingProxyType
from typing import NamedTuple

from redmax.errors import ModelError
from redmax.io.urdf import load_urdf

__all__ = ["DISTRIBUTION", "ROBOTS", "Robot", "available_robots", "load_robot", "robot_path", "robots_folder"]

DISTRIBUTION = "example-robot-data"
_MARKER = "share/example-robot-data/robots/"
_INSTALL = f"pip install {DISTRIBUTION}"


class Robot(NamedTuple):
    """One entry of :data:`ROBOTS`.

    path: the URDF file, relative to the distribution's ``robots`` folder.  ndof: degrees of freedom with a fixed
    base (``floating_base=True`` adds 6).  kind: arm, hand, legged, humanoid, mobile (wheeled base), flying or
    pendulum.  text: what the robot is.
    """

    path: str
    ndof: int
    kind: str
    text: str

    @property
    def description(self) -> str:
        """One line: what the robot is, its kind and its DOF count with a fixed base."""
        return f"{self.text} ({self.kind}, {self.ndof} DOF)"


_TABLE = {
    # arms and hands
    "ur3": Robot("ur_description/urdf/ur3_robot.urdf", 6, "arm", "Universal Robots UR3"),
    "ur3_gripper": Robot("ur_description/urdf/ur3_gripper.urdf", 6, "arm", "Universal Robots UR3 with a gripper"),
    "ur5": Robot("ur_description/urdf/ur5_robot.urdf", 6, "arm", "Universal Robots UR5"),
    "ur5_gripper": Robot("ur_description/urdf/ur5_gripper.urdf", 6, "arm", "Universal Robots UR5 with a gripper"),
    "ur10": Robot("ur_description/urdf/ur10_robot.urdf", 6, "arm", "Universal Robots UR10"),
    "panda": Robot("panda_description/urdf/panda.urdf", 9, "arm", "Franka Emika Panda with its two-finger gripper"),
    "kinova": Robot("kinova_description/robots/kinova.urdf", 6, "arm", "Kinova arm"),
    "z1": Robot("z1_description/urdf/z1.urdf", 7, "arm", "Unitree Z1 arm with its gripper"),
    "xarm": Robot("xarm_description/urdf/xarm7.urdf", 7, "arm", "UFACTORY xArm 7"),
    "so_arm_100": Robot("so_arm_description/urdf/so100.urdf", 6, "arm", "SO-100 low-cost arm with its gripper"),
    "so_arm_101": Robot("so_arm_description/urdf/so101.urdf", 6, "arm", "SO-101 low-cost arm with its gripper"),
    "talos_arm": Robot("talos_data/robots/talos_left_arm.urdf", 7, "arm", "left arm of PAL Robotics TALOS"),
    "baxter": Robot("baxter_description/urdf/baxter.urdf", 19, "arm", "Rethink Robotics Baxter, two arms"),
    "finger_edu": Robot("finger_edu_description/robots/finger_edu.urdf", 3, "arm", "ODRI educational finger"),
    "asr_twodof": Robot("asr_twodof_description/urdf/TwoDofs.urdf", 2, "arm", "two-DOF arm"),
    "allegro_left_hand": Robot("allegro_hand_description/urdf/allegro_left_hand.urdf", 16, "hand",
                               "Allegro left hand"),
    "allegro_right_hand": Robot("allegro_hand_description/urdf/allegro_right_hand.urdf", 16, "hand",
                                "Allegro right hand"),
    # pendulums
    "double_pendulum": Robot("double_pendulum_description/urdf/double_pendulum.urdf", 2, "pendulum",
                             "planar double pendulum"),
    "double_pendulum_continuous": Robot("double_pendulum_description/urdf/double_pendulum_continuous.urdf", 2,
                                        "pendulum", "planar double pendulum on continuous joints"),
    "double_pendulum_simple": Robot("double_pendulum_description/urdf/double_pendulum_simple.urdf", 2, "pendulum",
                                    "planar double pendulum, simple geometry"),
    # legged
    "a1": Robot("a1_description/urdf/a1.urdf", 12, "legged", "Unitree A1 quadruped"),
    "go1": Robot("go1_description/urdf/go1.urdf", 12, "legged", "Unitree Go1 quadruped"),
    "go2": Robot("go2_description/urdf/go2.urdf", 12, "legged", "Unitree Go2 quadruped"),
    "b1": Robot("b1_description/urdf/b1.urdf", 12, "legged", "Unitree B1 quadruped"),
    "b1_z1": Robot("b1_description/urdf/b1-z1.urdf", 19, "legged", "Unitree B1 quadruped carrying a Z1 arm"),
    "laikago": Robot("laikago_description/urdf/laikago.urdf", 12, "legged", "Unitree Laikago quadruped"),
    "anymal": Robot("anymal_b_simple_description/robots/anymal.urdf", 12, "legged",
                    "ANYbotics ANYmal B quadruped, simplified geometry"),
    "anymal_c": Robot("anymal_c_simple_description/urdf/anymal.urdf", 12, "legged",
                      "ANYbotics ANYmal C quadruped, simplified geometry"),
    "anymal_kinova": Robot("anymal_b_simple_description/robots/anymal-kinova.urdf", 18, "legged",
                           "ANYmal B quadruped carrying a Kinova arm"),
    "hyq": Robot("hyq_description/robots/hyq_no_sensors.urdf", 12, "legged", "IIT HyQ hydraulic quadruped"),
    "solo8": Robot("solo_description/robots/solo.urdf", 8, "legged", "ODRI Solo quadruped, 8 joints"),
    "solo12": Robot("solo_description/robots/solo12.urdf", 12, "legged", "ODRI Solo quadruped, 12 joints"),
    "bolt": Robot("bolt_description/robots/bolt.urdf", 6, "legged", "ODRI Bolt biped"),
    "quadruped": Robot("quadruped_description/urdf/quadruped.urdf", 8, "legged", "simple quadruped"),
    "centauro": Robot("centauro_description/urdf/centauro.urdf", 39, "legged",
                      "IIT Centauro, four legs and two arms"),
    # humanoids
    "talos": Robot("talos_data/robots/talos_reduced.urdf", 32, "humanoid",
                   "PAL Robotics TALOS, without the gripper joints"),
    "talos_full": Robot("talos_data/robots/talos_full_v2.urdf", 44, "humanoid",
                        "PAL Robotics TALOS with its gripper joints"),
    "icub": Robot("icub_description/robots/icub.urdf", 32, "humanoid", "IIT iCub"),
    "icub_reduced": Robot("icub_description/robots/icub_reduced.urdf", 29, "humanoid", "IIT iCub, reduced"),
    "romeo": Robot("romeo_description/urdf/romeo_small.urdf", 31, "humanoid", "Aldebaran Romeo"),
    "g1": Robot("g1_description/urdf/g1_29dof_rev_1_0.urdf", 29, "humanoid", "Unitree G1"),
    "g1_with_hands": Robot("g1_description/urdf/g1_29dof_with_hand_rev_1_0.urdf", 43, "humanoid",
                           "Unitree G1 with its hands"),
    "simple_humanoid": Robot("simple_humanoid_description/urdf/simple_humanoid.urdf", 29, "humanoid",
                             "simple humanoid"),
    "simple_humanoid_classical": Robot("simple_humanoid_description/urdf/simple_humanoid_classical.urdf", 29,
                                       "humanoid", "simple humanoid, classical joint order"),
    "human": Robot("human_description/robots/human.urdf", 36, "humanoid", "human body model"),
    "alexander": Robot("alexander_description/urdf/alexander_v1.lowerBodyOnly.urdf", 13, "humanoid",
                       "Alexander humanoid, lower body"),
    "alex_nub_hands": Robot("alex_description/urdf/alex_nub_hands.urdf", 19, "humanoid",
                            "Alex upper-body humanoid with nub hands"),
    "alex_psyonic_hands": Robot("alex_description/urdf/alex_psyonic_hands.urdf", 39, "humanoid",
                                "Alex upper-body humanoid with PSYONIC hands"),
    "alex_sake_hands": Robot("alex_description/urdf/alex_sake_hands.urdf", 23, "humanoid",
                             "Alex upper-body humanoid with SAKE hands"),
    # wheeled mobile manipulators
    "tiago": Robot("tiago_description/robots/tiago.urdf", 48, "mobile", "PAL Robotics TIAGo with its hand"),
    "tiago_no_hand": Robot("tiago_description/robots/tiago_no_hand.urdf", 12, "mobile",
                           "PAL Robotics TIAGo without hand"),
    "tiago_dual": Robot("tiago_description/robots/tiago_dual.urdf", 101, "mobile",
                        "PAL Robotics TIAGo with two arms and hands"),
    "tiago_pro": Robot("tiago_pro_description/robots/tiago_pro.urdf", 33, "mobile", "PAL Robotics TIAGo Pro"),
    "pr2": Robot("pr2_description/urdf/pr2.urdf", 30, "mobile", "Willow Garage PR2"),
    # flying
    "hector": Robot("hector_description/robots/quadrotor_base.urdf", 0, "flying",
                    "Hector quadrotor, one body (floating_base=True for its 6 DOF)"),
    "iris": Robot("iris_description/robots/iris.urdf", 4, "flying", "3DR Iris quadrotor with its rotors"),
    "borinot": Robot("borinot_description/urdf/borinot_flying_arm_2.urdf", 2, "flying",
                     "Borinot drone with a two-joint arm"),
    "hextilt": Robot("hextilt_description/urdf/hextilt_flying_arm_5.urdf", 5, "flying",
                     "Hextilt hexarotor with a five-joint arm"),
}

ROBOTS = MappingProxyType(dict(sorted(_TABLE.items())))
"""Every robot name redmax knows (sorted) -> :class:`Robot` (its URDF inside example-robot-data)."""


def robots_folder() -> str | None:
    """The ``robots`` folder of the installed example-robot-data distribution, or None when it is not installed.

    Found through the distribution's file list (its files sit under ``share/example-robot-data/robots``), without
    importing anything of it."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None
    for f in dist.files or []:
        s = f.as_posix()
        i = s.find(_MARKER)
        if i >= 0 and s.endswith(".urdf"):
            return os.fspath(dist.locate_file(s[: i + len(_MARKER) - 1]))
    return None


def available_robots(installed: bool = True) -> dict[str, str]:
    """Robot names (sorted) -> one-line description (what it is, its kind, its DOF count with a fixed base).

    Args:
        installed: True (default): only the robots whose URDF file is installed (an empty dict when
            example-robot-data is not installed); False: every name :func:`load_robot` knows.
    """
    root = robots_folder() if installed else None
    if installed and root is None:
        return {}
    return {name: r.description for name, r in ROBOTS.items()
            if not installed or os.path.isfile(os.path.join(root, r.path))}


def _key(name) -> str:
    if not isinstance(name, str):
        raise ModelError(f"a robot name is a string such as 'panda', got {name!r}")
    return name.strip().lower().replace("-", "_")


def _names(names) -> str:
    return ", ".join(names) if names else "(none)"


def robot_path(name: str) -> str:
    """Path of the URDF file of robot ``name`` (a key of :data:`ROBOTS`, case-insensitive) in the installed
    example-robot-data distribution.

    Raises:
        ModelError: an unknown name (with the closest known names), example-robot-data not installed (with the
            command to install it), or the file missing from the installed version.
    """
    key = _key(name)
    root = robots_folder()
    if key not in ROBOTS:
        close = difflib.get_close_matches(key, list(ROBOTS), n=3, cutoff=0.6)
        hint = f"did you mean {' or '.join(repr(c) for c in close)}? " if close else ""
        if root is None:
            listed = f"known robots (they need {DISTRIBUTION}: {_INSTALL}): {_names(ROBOTS)}"
        else:
            listed = f"available robots: {_names(available_robots())}"
        raise ModelError(f"unknown robot {name!r}; {hint}{listed}")
    if root is None:
        raise ModelError(f"robot {key!r}: the robot files come from the {DISTRIBUTION} package, which is not "
                         f"installed: {_INSTALL} (robots it provides: {_names(ROBOTS)})")
    path = os.path.join(root, ROBOTS[key].path)
    if not os.path.isfile(path):
        raise ModelError(f"robot {key!r}: {path} is missing from {DISTRIBUTION} {_version()} (a different version "
                         f"of the package?); available robots: {_names(available_robots())}")
    return path


def _version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:  # pragma: no cover - only between the lookup and this call
        return "(version unknown)"


_LOAD_URDF_KEYWORDS = tuple(p for p in inspect.signature(load_urdf).parameters if p != "path")


def load_robot(name: str, **kwargs):
    """Load robot ``name`` of example-robot-data (``pip install example-robot-data``) as a :class:`redmax.Model`.

    ``load_robot("panda")`` is ``load_urdf(robot_path("panda"))``: SI units, fixed base (``floating_base=True``
    attaches the root link with a free 3D joint named "root_joint", adding 6 DOF), the file's joint axes, limits,
    damping and friction in ``model.meta``.

    Args:
        name: a key of :data:`ROBOTS` (case-insensitive; ``-`` reads as ``_``); :func:`available_robots` lists
            the installed ones with descriptions.
        **kwargs: passed to :func:`redmax.load_urdf`: ``floating_base``, ``gravity`` (m/s^2, default
            (0, 0, -9.81)), ``merge_fixed``, ``meshes``, ``package_dirs``, ``strict``, ``mimic``.
    Returns:
        The Model (``model.meta["robot"]`` is the name written in the file).
    Raises:
        ModelError: an unknown name (with suggestions and the available names), example-robot-data not
            installed (naming the package to install), a keyword ``load_urdf`` does not take, or a problem
            in the file (as :func:`redmax.load_urdf`).
    """
    bad = sorted(k for k in kwargs if k not in _LOAD_URDF_KEYWORDS)
    if bad:
        raise ModelError(f"load_robot: unknown keyword argument {bad[0]!r}; load_urdf takes: "
                         f"{', '.join(_LOAD_URDF_KEYWORDS)}")
    return load_urdf(robot_path(name), **kwargs)
