"""The ``redmax`` command line (also ``python -m redmax``).

    redmax scenes                       list the built-in scenes
    redmax robots                       list the robots of example-robot-data (SCENE robot:NAME)
    redmax info SCENE                   bodies, joints, DOFs, forces and settings of a scene
    redmax run SCENE [--integrator NAME] [--dt H] [--duration T] [--method M] [--out results.npz]
                     [--json summary.json] [--plot energy.png] [--animate movie.gif|movie.mp4]
                     [--view ELEV,AZIM] [--no-frames]
    redmax plot SCENE FILE.png [--integrator NAME] [--dt H] [--duration T]   energy and constraint violation
    redmax --version
    redmax optimize SCENE [--integrator bdf1|sdirk2|bdf2] [--maxiter N] [--plot objective.png]
                     [--animate motion.gif] [--json summary.json]   (scenes with an [objective])
    redmax sweep SCENE --grid KEY=V1,V2,... [--out sweep.zarr] [--scheduler tcp://HOST:8786] [--workers N]
    redmax plot sweep.zarr FILE.png [--y H] [--x DIM] [--color DIM]   a sweep's variable (redmax.cli_sweep)

SCENE is a built-in name (``reference/05``), a scene file (``my_scene.toml``), a robot file (``robot.urdf``,
``model.xml`` for MJCF through MuJoCo) or a robot of example-robot-data by name (``robot:panda``; fixed base, dt
1 ms, 1 s).  User errors print one line to stderr and exit with status 2.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import os
import shutil
import sys
import time
import warnings

from redmax._jit import compile_seconds
from redmax.errors import RedmaxError, SimulationError

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, status 2, no usage dump
        raise _UserError(message)


class _UserError(Exception):
    pass


class _Progress:
    """A text progress bar on stderr, shown only on a terminal and only once a run exceeds one second."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.t0 = time.perf_counter()
        self.last = 0.0
        self.shown = False

    def __call__(self, t, t_end):
        if not self.enabled:
            return
        now = time.perf_counter()
        if now - self.t0 < 1.0 or now - self.last < 0.1:
            return
        self.last = now
        self.shown = True
        frac = 0.0 if t_end <= 0 else min(max(float(t) / float(t_end), 0.0), 1.0)
        n = int(30 * frac)
        sys.stderr.write(f"\r[{'#' * n}{'.' * (30 - n)}] {100 * frac:5.1f}%  t = {float(t):.3f} s")
        sys.stderr.flush()

    def close(self):
        if self.shown:
            sys.stderr.write("\r" + " " * 60 + "\r")
            sys.stderr.flush()


_INTEGRATOR_HELP = {"euler": "linearly implicit Euler, fixed step", "rk45": "adaptive Runge-Kutta 4(5)",
                    "dop853": "adaptive Dormand-Prince 8(5,3)", "rk23": "adaptive Runge-Kutta 2(3)",
                    "radau": "implicit Radau IIA", "scipy-bdf": "SciPy's implicit BDF",
                    "lsoda": "LSODA (stiff/non-stiff switching)", "bdf1": "backward Euler with Newton",
                    "sdirk2": "SDIRK2 with Newton", "bdf2": "BDF2 with Newton", "bdf": "deprecated name of scipy-bdf"}


def _integrators() -> tuple[str, ...]:
    from redmax.integrators import INTEGRATORS

    return INTEGRATORS


def _integrator(name: str) -> str:
    """A case-insensitive integrator name; one-line error listing every integrator otherwise."""
    key = name.lower()
    if key not in _integrators():
        raise _UserError(f"--integrator: unknown integrator {name!r}; expected one of {', '.join(_integrators())}")
    return key


def _parser() -> argparse.ArgumentParser:
    from redmax._version import __version__

    p = _Parser(prog="redmax", description="Articulated rigid-body dynamics (RedMax): run and inspect scenes.")
    p.add_argument("--version", action="version", version=f"redmax {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.add_parser("scenes", help="list the built-in scenes")
    sub.add_parser("robots", help="list the robots of example-robot-data (run them as robot:NAME)")
    info = sub.add_parser("info", help="describe a scene")
    what = ("built-in name (e.g. reference/05), scene file (.toml), robot file (.urdf, MJCF .xml) or robot:NAME "
            "(a robot of example-robot-data, e.g. robot:panda; see `redmax robots`)")
    info.add_argument("scene", help=what)
    _add_params(info)
    run = sub.add_parser("run", help="simulate a scene")
    run.add_argument("scene", help=what)
    listed = "; ".join(f"{k} ({v})" for k, v in _INTEGRATOR_HELP.items() if k in _integrators())
    run.add_argument("--integrator", type=_integrator, metavar="NAME",
                     help=f"one of: {listed}; default: the scene's")
    run.add_argument("--dt", type=float, help="time step (euler) or sampling interval (ODE); default: the scene's")
    run.add_argument("--duration", type=float, help="simulated time in seconds; default: the scene's")
    run.add_argument("--method", choices=("redmax", "recursive"), help="dynamics for ODE integrators")
    _add_solver(run)
    _add_params(run)
    run.add_argument("--out", metavar="FILE.npz", help="write t, q, qdot, energies and metadata")
    run.add_argument("--json", metavar="FILE.json", help="write a summary (final state, initial/final energies)")
    run.add_argument("--plot", metavar="FILE.png", help="plot kinetic, potential and total energy against time")
    run.add_argument("--animate", metavar="FILE.gif|FILE.mp4", help="render an animation (mp4 needs ffmpeg)")
    run.add_argument("--view", metavar="ELEV,AZIM", help="camera of the animation in degrees (default 30,-60)")
    run.add_argument("--no-frames", action="store_true", help="animation without the joint-frame triads")
    run.add_argument("--focus", metavar="BODY", help="the animation's camera frames this body")
    run.add_argument("--html", metavar="FILE.html", help="a self-contained HTML replay (plays in any browser)")
    run.add_argument("--quiet", action="store_true", help="print nothing but errors")
    _add_on_instability(run)
    plot = sub.add_parser("plot", help="simulate a scene and plot its energy and constraint violation")
    plot.add_argument("scene", help=what)
    plot.add_argument("file", metavar="FILE.png", help="output figure (.png, .pdf, .svg, .jpg)")
    plot.add_argument("--integrator", help="euler (linearly implicit), rk45 or dop853; default: the scene's")
    plot.add_argument("--dt", type=float, help="time step (euler) or sampling interval (ODE); default: the scene's")
    plot.add_argument("--duration", type=float, help="simulated time in seconds; default: the scene's")
    plot.add_argument("--what", choices=("energy", "violation", "reactions", "iterations"),
                      help="one figure of what the solvers did; default: energy with the constraint violation")
    _add_solver(plot)
    _add_params(plot)
    _add_on_instability(plot)

    from redmax.cli_optimize import add_parser as _add_optimize
    from redmax.cli_sweep import add_parser as _add_sweep
    from redmax.cli_sweep import add_plot_arguments

    add_plot_arguments(plot)
    _add_optimize(sub)
    _add_sweep(sub)
    from redmax.cli_view import add_parser as _add_view

    _add_view(sub)
    comp = sub.add_parser("compile", help="compile the kernels ahead of first use (cached on disk)")
    comp.add_argument("features", nargs="*", metavar="FEATURE",
                      help="what to compile: " + ", ".join(_FEATURE_NAMES) + "; default: simulate and dynamics")
    comp.add_argument("--all", action="store_true", help="every feature")
    comp.add_argument("-j", "--jobs", type=int, default=None, help="parallel processes (default: the CPUs)")
    return p


_FEATURE_NAMES = ("simulate", "simulator", "dynamics", "batched", "derivatives", "implicit", "constraints", "large",
                  "ode")


def _cmd_compile(a) -> int:
    from redmax.warmup import FEATURES, warm_up

    names = list(FEATURES) if a.all else (a.features or ["simulate", "dynamics"])
    bad = [n for n in names if n not in FEATURES]
    if bad:
        raise _UserError(f"unknown feature {bad[0]!r}; expected one of {', '.join(FEATURES)} (or --all)")
    if a.jobs is not None and a.jobs < 1:
        raise _UserError(f"--jobs must be at least 1, got {a.jobs}")
    print(f"compiling {len(names)} feature(s): {', '.join(names)} (cached on disk; a few minutes on 2 cores)",
          flush=True)
    t0 = time.perf_counter()

    def done(name, seconds, k, total):
        print(f"[{k}/{total}] {name}: {seconds:.1f} s ({FEATURES[name][0]})", flush=True)

    warm_up(names, processes=a.jobs, progress=done)
    print(f"done in {time.perf_counter() - t0:.1f} s")
    return 0


def _add_params(p) -> None:
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter of a parametric scene (repeatable; `redmax scenes` lists them), e.g. "
                        "--param n_deck=80")


def _add_solver(p) -> None:
    p.add_argument("--solver", metavar="NAME",
                   help="linear solver of the Euler step: auto, dense, pcg, recursive or sparse; default: the "
                        "scene's")
    p.add_argument("--friction-solver", choices=("bisp", "sp", "none"), dest="friction_solver",
                   help="friction in joints, loops and floors: bisp (Bilateral Staggered Projections), sp (the "
                        "Staggered Projections baseline, maximal coordinates) or none (ignored); default: the "
                        "scene's (bisp)")
    p.add_argument("--compat", choices=("original",),
                   help="reproduce the original RedMax code's friction defects (comparison with its numbers only)")


def _load(a):
    """The scene of a command, with its --param values."""
    from redmax import scenes

    params = {}
    for item in getattr(a, "param", []):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise _UserError(f"--param {item}: expected NAME=VALUE")
        params[key.strip()] = value.strip()
    return scenes.load(a.scene, **params)


def _add_on_instability(p) -> None:
    p.add_argument("--on-instability", choices=("warn", "raise", "ignore"), dest="on_instability",
                   help="when the energy grows beyond what the scene can explain: warn (one line on stderr), raise "
                        "(exit with status 2) or ignore; default: the scene's (warn)")


def _simulate(s, a, **kw):
    """``s.simulate(...)`` for a command: a SimulationWarning becomes one ``redmax: warning:`` line on stderr, a
    SimulationError one error line prefixed with the scene (once)."""
    from redmax.errors import SimulationWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("ignore", RuntimeWarning)  # a blow-up is reported by the SimulationError, not NumPy
        warnings.simplefilter("always", SimulationWarning)
        try:
            res = s.simulate(integrator=a.integrator, dt=a.dt, duration=a.duration,
                             on_instability=a.on_instability, solver=getattr(a, "solver", None),
                             friction_solver=getattr(a, "friction_solver", None), compat=getattr(a, "compat", None),
                             **kw)
        except SimulationError as e:
            msg = str(e)
            raise SimulationError(msg if msg.startswith(f"{a.scene}:") else f"{a.scene}: {msg}") from None
    for w in caught:
        if issubclass(w.category, SimulationWarning):
            print(f"redmax: warning: {w.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return res


def _cmd_scenes() -> int:
    from redmax import scenes

    listed = scenes.available()
    width = max(map(len, listed), default=10) + 1
    for name, desc in listed.items():
        params = scenes.parameters(name)
        if params:
            desc += " [parameters: " + ", ".join(f"{k}={v!r}" for k, v in params.items()) + "]"
        print(f"{name:{width}s} {desc}")
    print(f"{'robot:NAME':{width}s} a robot of example-robot-data by name, e.g. robot:panda (list: redmax robots)")
    return 0


def _cmd_robots() -> int:
    """``redmax robots``: the names ``robot:NAME`` accepts, with what each robot is."""
    from redmax.io.robots import DISTRIBUTION, available_robots, robots_folder

    root = robots_folder()
    listed = available_robots(installed=root is not None)
    width = max(map(len, listed), default=0) + 2
    for name, desc in listed.items():
        print(f"{name:{width}s} {desc}")
    if root is None:
        print(f"({DISTRIBUTION} is not installed: pip install {DISTRIBUTION})")
    else:
        print(f"({len(listed)} robots of {DISTRIBUTION} in {root}; e.g. redmax info robot:panda, "
              "rm.load_robot(\"panda\"))")
    return 0


def _cmd_info(a) -> int:
    s = _load(a)
    m = s.model
    print(f"scene {s.name}: {s.description}")
    print(f"integrator {s.integrator}, dt {s.dt}, duration {s.duration}, method {s.method}, solver {s.solver}")
    if s.params:
        print("parameters: " + ", ".join(f"{k}={v!r}" for k, v in s.params.items()))
    print(m.describe(details=True))
    if m.forces:
        print("forces:")
        for f in m.forces:
            print(f"  {f.name} ({type(f).__name__})")
    if m.constraints:
        print(f"constraints (baumgarte {s.baumgarte:g}, ODE gains {list(s.baumgarte_acc)}, solver "
              f"{s.constraint_solver}):")
        for c in m.constraints:
            print(f"  {c.describe()}")
    _print_friction(s)
    return 0


def _print_friction(s) -> None:
    """Contact geometry and coefficients of a scene with friction."""
    from redmax.friction.coefficients import joint_mu, world_mu

    m = s.model
    joints = [(m.joint_names[i], g) for i, g in enumerate(m.contacts) if g is not None]
    loops = [(c.name, c.contact) for c in m.constraints if getattr(c, "contact", None) is not None]
    mu2 = world_mu(m)
    if not (joints or loops or mu2 is not None):
        return
    floors = "none" if mu2 is None else f"{mu2:g}"
    print(f"friction ({s.friction_solver}{', compat ' + s.compat if s.compat else ''}): joint mu {joint_mu(m):g}, "
          f"world mu {floors}")
    for kind, items in (("joint", joints), ("loop", loops)):
        for name, g in items:
            dims = ", ".join(f"{k} {v}" for k, v in g.to_scene().items() if k != "type")
            print(f"  {kind} {name}: {g.type} ({dims})")


def _cmd_plot(a) -> int:
    """``redmax plot``: simulate and draw energy and constraint violation (or a sweep store's figure)."""
    from redmax.cli_sweep import is_store
    from redmax.cli_sweep import plot as _plot_sweep
    from redmax.viz import plot_constraints

    if is_store(a.scene):
        return _plot_sweep(a)
    _check_out(a.file, (".png", ".pdf", ".svg", ".jpg"), "plot")
    for flag, v in (("--dt", a.dt), ("--duration", a.duration)):
        if v is not None and not v > 0:
            raise _UserError(f"{flag} must be positive, got {v}")
    s = _load(a)
    res = _simulate(s, a)
    if a.what:
        from redmax.viz import plot

        plot(res, a.file, what=a.what)
    else:
        plot_constraints(res, a.file)
    print(f"wrote plot {a.file}")
    return 0


def _check_out(path: str | None, suffixes: tuple[str, ...], flag: str) -> None:
    """Every output path is checked before the simulation runs (name, folder, permission, tools)."""
    if path is None:
        return
    if not path.lower().endswith(suffixes):
        raise _UserError(f"{flag} {path}: expected a file name ending in {' or '.join(suffixes)}")
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise _UserError(f"{flag} {path}: folder {d} does not exist")
    if os.path.isdir(path):
        raise _UserError(f"{flag} {path}: is a folder")
    if not os.access(d, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise _UserError(f"{flag} {path}: cannot write there (permission denied)")
    if path.lower().endswith(".mp4") and shutil.which("ffmpeg") is None:
        raise _UserError(f"{flag} {path}: MP4 needs ffmpeg; install it or write a .gif")


class _CompileNotices:
    """For the duration of a command: the ``redmax`` logger's messages (such as a long first compile) on stderr,
    one line each, prefixed ``redmax:`` (nothing with ``--quiet``)."""

    def __init__(self, quiet: bool):
        import logging

        self.logger = logging.getLogger("redmax")
        self.handler = logging.StreamHandler(sys.stderr)
        self.handler.setFormatter(logging.Formatter("redmax: %(message)s"))
        self.handler.setLevel(logging.ERROR if quiet else logging.INFO)

    def __enter__(self):
        self.logger.addHandler(self.handler)
        return self

    def __exit__(self, *exc):
        self.logger.removeHandler(self.handler)


def _view(text):
    """``--view ELEV,AZIM`` as two finite floats (None when absent)."""
    if text is None:
        return None
    try:
        elev, azim = (float(v) for v in text.split(","))
    except ValueError:
        raise _UserError(f"--view must be ELEV,AZIM in degrees (e.g. 60,-90), got {text!r}") from None
    if not (math.isfinite(elev) and math.isfinite(azim)):
        raise _UserError(f"--view must be finite, got {text!r}")
    return elev, azim


def _cmd_run(a) -> int:
    from redmax.io.results import save_npz, save_summary

    _check_out(a.out, (".npz",), "--out")
    _check_out(a.json, (".json",), "--json")
    _check_out(a.plot, (".png", ".pdf", ".svg", ".jpg"), "--plot")
    _check_out(a.animate, (".gif", ".mp4"), "--animate")
    _check_out(a.html, (".html",), "--html")
    if a.dt is not None and not a.dt > 0:
        raise _UserError(f"--dt must be positive, got {a.dt}")
    if a.duration is not None and not a.duration >= 0:
        raise _UserError(f"--duration must be >= 0, got {a.duration}")
    view = _view(a.view)
    s = _load(a)
    prog = _Progress(sys.stderr.isatty() and not a.quiet)
    t0 = time.perf_counter()
    c0 = compile_seconds()
    try:
        res = _simulate(s, a, method=a.method, progress=prog)
    finally:
        prog.close()
    compiling = compile_seconds() - c0
    wall = time.perf_counter() - t0 - compiling
    if not a.quiet:
        e = res.energy
        extra = f" (+ {compiling:.1f} s compiling)" if compiling >= 0.05 else ""
        print(f"{s.name}: {res.t.size - 1} steps of {res.meta['integrator']} (dt {res.meta['dt']}) to "
              f"t = {res.t[-1]:.6g} s in {wall:.2f} s{extra}")
        print(f"energy: kinetic {e['kinetic'][0]:.6g} -> {e['kinetic'][-1]:.6g}, total {e['total'][0]:.6g} -> "
              f"{e['total'][-1]:.6g}; H = T(end) + V(end) - V(0) = {res.H:.10g}")
    if a.out:
        save_npz(res, a.out)
    if a.json:
        save_summary(res, a.json)
    if a.plot:
        from redmax.viz import plot_constraints, plot_energy

        (plot_constraints if res.constraint_violation else plot_energy)(res, a.plot)
    if a.animate:
        from redmax.viz import animate

        animate(s.model, res, a.animate, frames=not a.no_frames, view=view, focus=a.focus)
    if a.html:
        res.to_html(a.html, model=s.model)
    for flag, path in (("results", a.out), ("summary", a.json), ("plot", a.plot), ("animation", a.animate),
                       ("replay", a.html)):
        if path and not a.quiet:
            print(f"wrote {flag} {path}")
    return 0


def _dispatch(a) -> int:
    if a.command == "scenes":
        return _cmd_scenes()
    if a.command == "robots":
        return _cmd_robots()
    if a.command == "info":
        return _cmd_info(a)
    if a.command == "run":
        return _cmd_run(a)
    if a.command == "plot":
        return _cmd_plot(a)
    if a.command == "optimize":
        from redmax.cli_optimize import run as _cmd_optimize

        return _cmd_optimize(a)
    if a.command == "sweep":
        from redmax.cli_sweep import run as _cmd_sweep

        return _cmd_sweep(a)
    if a.command == "view":
        from redmax.cli_view import run as _cmd_view

        return _cmd_view(a)
    if a.command == "compile":
        return _cmd_compile(a)
    _parser().print_help()
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit status (0 success, 2 user error)."""
    args = sys.argv[1:] if argv is None else argv
    try:
        a = _parser().parse_args(args)
        with _CompileNotices(getattr(a, "quiet", False)):
            return _dispatch(a)
    except (_UserError, RedmaxError) as e:
        print(f"redmax: error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (``redmax scenes | head``): stop quietly, as Unix tools do
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as e:
        print(f"redmax: error: {e.filename or ''}: {e.strerror}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("redmax: interrupted", file=sys.stderr)
        return 130
    except RecursionError:
        print("redmax: error: input nested too deeply", file=sys.stderr)
        return 2
    except Exception as e:
        if os.environ.get("REDMAX_DEBUG"):
            raise
        print(f"redmax: internal error: {type(e).__name__}: {e} (this is a bug; set REDMAX_DEBUG=1 for the "
              "traceback)", file=sys.stderr)
        return 1
