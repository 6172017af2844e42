"""Named implementations of one kind (integrators, linear solvers, constrained solvers): one registry each.

A registry is a ``dict`` from a name to its implementation; :meth:`Registry.register` adds one (also usable as a
decorator), :meth:`Registry.lookup` finds one or raises the kind's error listing what is available.  Adding an
implementation is one module plus one registration line::

    from redmax.integrators import INTEGRATORS
    INTEGRATORS.register("my-integrator", run)       # run(model, state, settings) -> Result

``docs/extending.md`` walks through each kind.
"""

from __future__ import annotations

from redmax.errors import RedmaxError

__all__ = ["Registry"]


class Registry(dict):
    """``name -> implementation`` for one ``kind`` (used in messages: "unknown integrator 'x'")."""

    def __init__(self, kind: str, error: type[RedmaxError] = RedmaxError):
        super().__init__()
        self.kind = kind
        self.error = error

    def register(self, name: str, entry=None, *, replace: bool = False):
        """Register ``entry`` under ``name`` (returns it); without ``entry``, a decorator that registers what it
        decorates.  A name already taken is refused unless ``replace``."""
        if not isinstance(name, str) or not name.strip():
            raise self.error(f"a {self.kind} is registered under a non-empty name, got {name!r}")
        if entry is None:
            return lambda obj: self.register(name, obj, replace=replace)
        if name in self and not replace and self[name] is not entry:
            raise self.error(f"a {self.kind} named {name!r} is registered already (pass replace=True to replace it)")
        self[name] = entry
        return entry

    def arrange(self, names) -> None:
        """List ``names`` first, in this order (messages and ``list(registry)``), the others after them."""
        rest = {k: v for k, v in self.items() if k not in names}
        first = {k: self[k] for k in names if k in self}
        self.clear()
        self.update(first)
        self.update(rest)

    def lookup(self, name):
        """The implementation registered under ``name``; the kind's error, naming what is available, otherwise."""
        if not isinstance(name, str):
            raise self.error(f"{self.kind} must be a name (one of {', '.join(self)}), got {type(name).__name__}")
        try:
            return self[name]
        except KeyError:
            raise self.error(f"unknown {self.kind} {name!r}; expected one of {', '.join(self)}") from None
