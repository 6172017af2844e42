"""A small TOML writer for scene files (Python's ``tomllib`` only reads).

Floats are written with ``repr`` (shortest round-trip form), so ``tomllib.loads(dumps(d))`` returns the
same floats bit for bit; ``inf`` and ``nan`` use TOML's literals.  Tables named in ``table_keys`` are
written as ``[table]`` / ``[[array.of.tables]]`` sections, every other mapping as an inline table.
"""

from __future__ import annotations

import json
import math

__all__ = ["dumps"]


def _scalar(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):  # JSON escapes are TOML's, except that TOML also forbids a raw DEL (U+007F)
        return json.dumps(v, ensure_ascii=False).replace("\x7f", "\\u007f")
    raise TypeError(f"cannot write {type(v).__name__} to TOML")


def _value(v) -> str:
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_key(k)} = {_value(x)}" for k, x in v.items()) + " }"
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return _scalar(v)


def _key(k: str) -> str:
    if k and all(c.isalnum() or c in "_-" for c in k):
        return k
    return json.dumps(k)


def dumps(doc: dict, table_keys: frozenset = frozenset()) -> str:
    """Serialise ``doc``; keys listed in ``table_keys`` (dotted paths without indices, e.g.
    ``"bodies.joint"``) become sections, everything else inline values."""
    lines: list[str] = []
    _emit(doc, "", lines, table_keys, header=None)
    return "\n".join(lines).strip() + "\n"


def _emit(d: dict, path: str, lines: list, table_keys, header) -> None:
    if header is not None:
        lines.append("")
        lines.append(header)
    sections = []
    for k, v in d.items():
        if v is None:
            continue
        sub = f"{path}.{k}" if path else k
        if sub in table_keys and isinstance(v, dict):
            sections.append((k, v, False))
        elif sub in table_keys and isinstance(v, list) and all(isinstance(x, dict) for x in v):
            sections.append((k, v, True))
        else:
            lines.append(f"{_key(k)} = {_value(v)}")
    for k, v, is_array in sections:
        sub = f"{path}.{k}" if path else k
        if is_array:
            for item in v:
                _emit(item, sub, lines, table_keys, f"[[{sub}]]")
        else:
            _emit(v, sub, lines, table_keys, f"[{sub}]")
