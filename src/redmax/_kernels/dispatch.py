"""Registries of element kinds (joint families, constraint types) and the compiled dispatch written from them.

Numba dispatches on integer type codes, so a registry's kernels are reached through a function
``name(code, args)`` that is the chain ``if code == <kind's code>: return <kind's kernel>(args)`` over the
registered kinds, then a default.  :func:`write_dispatcher` writes that function from the registry when the
registry's module is imported (the text is attributed to that module's file, and the kernel cache stamps every
caller with it: ``__redmax_source__``), so adding a kind never edits a dispatcher.  :func:`registered` reads a
registry: the built-in entries (``"module:Class"``, one line each) and the kinds other packages declare as
entry points of the registry's group.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable, Sequence

from redmax._jit import njit
from redmax.errors import RedmaxWarning

__all__ = ["registered", "write_dispatcher"]


def _load(entry: str):
    module, name = entry.split(":")
    return getattr(importlib.import_module(module), name)


def registered(entries: Sequence[str], group: str, check: Callable[[tuple], None]) -> tuple:
    """The classes of a registry: ``entries`` (``"module:Class"``) then those of the entry points of ``group``
    (sorted by name).  ``check(classes)`` raises for a registry that cannot be served; the built-in entries must
    pass it, and an entry point that fails to import or to pass it is left out with a ``RedmaxWarning`` naming it
    (a broken extension must not break ``import redmax``)."""
    from importlib.metadata import entry_points

    built_in = tuple(_load(e) for e in entries)
    check(built_in)
    out: list = []
    for ep in sorted(entry_points(group=group), key=lambda e: e.name):
        try:
            cls = ep.load()
            check((*built_in, *out, cls))
        except Exception as exc:
            warnings.warn(f"{group} entry point {ep.name!r} ({ep.value}) is not used: {exc}", RedmaxWarning,
                          stacklevel=2)
            continue
        out.append(cls)
    return (*built_in, *out)


def write_dispatcher(name: str, args: str, cases: Sequence[tuple], default: str, doc: str, file: str,
                     module: str, inline: str = "always"):
    """A Numba function ``name(code, <args>)``: for each ``(code, label, kernel)`` of ``cases`` (kernel None:
    skipped) ``if code == code: return kernel(<args>)``, then ``return <default>``.  ``file``, ``module``: where
    the text is attributed (the registry's module).  ``inline``: Numba's option ("always": no compile level of its
    own, as a hand-written chain)."""
    names: dict = {}
    lines = [f"def {name}(code, {args}):"]
    for i, (code, label, kernel) in enumerate(cases):
        if kernel is not None:
            names[f"_k{i}"] = kernel
            lines += [f"    if code == {int(code)}:  # {label}", f"        return _k{i}({args})"]
    lines.append(f"    return {default}")
    text = "\n".join(lines) + "\n"
    exec(compile(text, file, "exec"), names)  # our own text, written from the registry
    fn = names[name]
    fn.__module__ = module
    fn.__doc__ = doc
    fn.__redmax_source__ = text
    return njit(cache=True, inline=inline)(fn)
