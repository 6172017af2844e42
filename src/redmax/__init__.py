"""redmax: exact, fast and differentiable dynamics of articulated rigid bodies.

Reduced coordinates with maximal forces (RedMax, Wang et al. 2019).  The public façade::

    import redmax as rm
    scene = rm.scenes.load("reference/05")
    result = scene.simulate(integrator="euler")      # or "rk45", "dop853"
    tau = rm.rnea(model, q, qd, qdd); qdd = rm.aba(model, q, qd, tau); M = rm.crba(model, q)
"""

from redmax import _kernel_cache  # noqa: F401, I001  (first: stamps the Numba cache of every kernel)
from redmax import bodies, constraints, deformables, dynamics, forces, friction, integrators, joints, kinematics
from redmax import scenes, spatial, viz
from redmax.bodies import Composite as CompositeBody
from redmax.bodies import Cuboid, Cylinder, Mesh, Sphere
from redmax.dynamics import (
    aba,
    crba,
    energies,
    hybrid_dynamics,
    minv,
    minv_product,
    redmax_accelerations,
    redmax_mass_matrix,
    redmax_system,
    rnea,
)
from redmax.errors import ModelError, RedmaxError, RedmaxWarning, SceneError, SimulationError, SimulationWarning
from redmax.integrators import Result, euler_step, linearized_step, simulate
from redmax.integrators.maximal import MaximalResult, simulate_maximal
from redmax.integrators.rollout import Rollouts, rollout
from redmax.sweeps import sweep
from redmax.io.mjcf import load_mjcf
from redmax.io.robots import available_robots, load_robot, robot_path
from redmax.io.urdf import link_pose, load_urdf
from redmax.joints import (
    Composite,
    Fixed,
    Free2D,
    Free3D,
    Planar,
    Prismatic,
    Revolute,
    SphericalEuler,
    SphericalExp,
    SplineCurve,
    SplineSurface,
    Translational,
    Universal,
)
from redmax.kinematics import forward_kinematics, jacobian
from redmax.kinematics import kinematics as evaluate_kinematics
from redmax.model import Inputs, Model, Schedule, State
from redmax.builder import ModelBuilder
from redmax.simulator import Simulator
from redmax.warmup import warm_up
from redmax import objectives, optimize, params  # differentiable simulation
from redmax.derivatives import balafoutis_patel
from redmax.derivatives.aba_second_order import aba_second_order_derivatives
from redmax.derivatives.first_order import aba_derivatives, rnea_derivatives
from redmax.derivatives.rnea_second_order import rnea_second_order_derivatives
from redmax._kernels.pool import get_num_threads, set_num_threads
from redmax.integrators.step_derivatives import step_derivatives

from redmax._version import __version__

__all__ = [
    "Composite",
    "CompositeBody",
    "Cuboid",
    "Cylinder",
    "Fixed",
    "Free2D",
    "Free3D",
    "Inputs",
    "MaximalResult",
    "Mesh",
    "Model",
    "ModelBuilder",
    "ModelError",
    "Planar",
    "Prismatic",
    "RedmaxError",
    "RedmaxWarning",
    "Result",
    "Revolute",
    "Rollouts",
    "SceneError",
    "Schedule",
    "SimulationError",
    "SimulationWarning",
    "Simulator",
    "Sphere",
    "SphericalEuler",
    "SphericalExp",
    "SplineCurve",
    "SplineSurface",
    "State",
    "Translational",
    "Universal",
    "__version__",
    "aba",
    "available_robots",
    "bodies",
    "constraints",
    "crba",
    "deformables",
    "dynamics",
    "energies",
    "euler_step",
    "evaluate_kinematics",
    "forces",
    "forward_kinematics",
    "friction",
    "hybrid_dynamics",
    "integrators",
    "jacobian",
    "joints",
    "kinematics",
    "linearized_step",
    "link_pose",
    "load_mjcf",
    "load_robot",
    "load_urdf",
    "minv",
    "minv_product",
    "redmax_accelerations",
    "redmax_mass_matrix",
    "redmax_system",
    "rnea",
    "robot_path",
    "rollout",
    "scenes",
    "simulate",
    "simulate_maximal",
    "spatial",
    "sweep",
    "viz",
    "warm_up",
]

__all__ += ["objectives", "optimize", "params"]
__all__ += ["aba_derivatives", "aba_second_order_derivatives", "balafoutis_patel", "rnea_derivatives",
            "rnea_second_order_derivatives", "step_derivatives"]
__all__ += ["get_num_threads", "set_num_threads"]
