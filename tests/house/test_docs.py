"""The README and the docs tell the truth: every python block runs alone and prints what the text says.

Each ```python block of README.md and of docs/*.md runs in a fresh interpreter, from a temporary folder outside the
repository (PYTHONPATH unchanged), and must exit 0. A block of any language preceded by
``<!-- docs-test: file=PATH -->`` is not run: it is written to PATH in that folder for every later python block of
its page (a module the text imports, an entry-point file). When the block is followed by a ```text block (only blank
lines, or an HTML comment with options, in between), that block is the expected standard output: both outputs are
cut into numbers and the text between them; the text must be equal up to white space and the numbers equal to a
relative tolerance of 1e-6 (``rtol``), unless the comment sets another one for that block, e.g.
``<!-- docs-test: rtol=1e-3 (a chaotic run) -->``. Blocks that need an optional extra (example-robot-data, MuJoCo,
matplotlib, Pinocchio) run when it is installed; the test extra installs all of them.

To refresh an expected output after a deliberate change, run ``python tests/house/test_docs.py --update FILE.md`` and
read the diff: it rewrites the text blocks of FILE.md with what the blocks print now.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]  # tests/house/ -> the repository (also run as a script: no helper import)
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]

_FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
_OPTIONS = re.compile(r"^\s*(?:<!--\s*docs-test:(.*?)-->\s*)?$", re.S)
_FILE = re.compile(r"<!--\s*docs-test:\s*file=(\S+)\s*-->\s*$")
_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|\b(?:nan|inf)\b")
_TIMEOUT = 1800  # seconds; a cold Numba cache compiles the kernels a block uses

# what a block needs -> (the text that tells, how to check it is installed)
_EXTRAS = {
    "example-robot-data": (re.compile(r"load_robot|robot_path|available_robots|robot:"),
                           lambda: _has_distribution("example-robot-data")),
    "mujoco": (re.compile(r"load_mjcf|\bmujoco\b"), lambda: importlib.util.find_spec("mujoco") is not None),
    "matplotlib": (re.compile(r"matplotlib|redmax\.viz|--plot|--animate"),
                   lambda: importlib.util.find_spec("matplotlib") is not None),
    "pin": (re.compile(r"\bpinocchio\b"), lambda: importlib.util.find_spec("pinocchio") is not None),
}


def _has_distribution(name: str) -> bool:
    try:
        importlib.metadata.distribution(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


@dataclass
class Block:
    path: Path
    line: int  # line of the ```python fence (1-based)
    code: str
    expected: str | None  # the ```text block after it, or None
    expected_span: tuple[int, int] | None  # character span of that text block's body in the file
    rtol: float
    files: dict[str, str] | None = None  # PATH -> text written beside the block before it runs

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line}"


def python_blocks(path: Path) -> list[Block]:
    """The python blocks of a markdown file, each with the expected output that follows it (if any)."""
    text = path.read_text(encoding="utf-8")
    fences = list(_FENCE.finditer(text))
    out, files = [], {}
    for k, m in enumerate(fences):
        as_file = _FILE.search(text[fences[k - 1].end() if k else 0:m.start()])
        if as_file:
            files[as_file.group(1)] = m.group(2)
            continue
        if m.group(1) != "python":
            continue
        expected, span, rtol = None, None, 1e-6
        if k + 1 < len(fences) and fences[k + 1].group(1) == "text":
            between = _OPTIONS.match(text[m.end():fences[k + 1].start()])
            if between:
                nxt = fences[k + 1]
                expected, span = nxt.group(2), nxt.span(2)
                for key, value in re.findall(r"(\w+)=(\S+)", between.group(1) or ""):
                    if key == "rtol":
                        rtol = float(value)
                    else:
                        raise ValueError(f"{path.name}: unknown docs-test option {key!r}")
        out.append(Block(path, text.count("\n", 0, m.start()) + 1, m.group(2), expected, span, rtol, dict(files)))
    return out


def run_block(block: Block, workdir: Path) -> subprocess.CompletedProcess:
    """Run one block alone in a fresh interpreter from ``workdir`` (outside the repository)."""
    for name, body in (block.files or {}).items():
        target = workdir / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")
    script = workdir / "block.py"
    script.write_text(block.code, encoding="utf-8")
    env = dict(os.environ, MPLBACKEND="Agg")
    return subprocess.run([sys.executable, str(script)], cwd=workdir, env=env, capture_output=True, text=True,
                          timeout=_TIMEOUT)


def _split(output: str) -> tuple[list[str], list[float]]:
    """The text between numbers (white space removed) and the numbers of an output."""
    words, numbers, last = [], [], 0
    for m in _NUMBER.finditer(output):
        words.append(re.sub(r"\s+", "", output[last:m.start()]))
        numbers.append(float(m.group()))
        last = m.end()
    words.append(re.sub(r"\s+", "", output[last:]))
    return words, numbers


def compare_output(actual: str, expected: str, rtol: float) -> list[str]:
    """Differences between an output and the expected one (empty when they agree)."""
    aw, an = _split(actual)
    ew, en = _split(expected)
    if aw != ew or len(an) != len(en):
        return [f"the text differs:\n--- expected\n{expected}\n--- printed\n{actual}"]
    problems = []
    for k, (a, e) in enumerate(zip(an, en, strict=True)):
        same = (a == e) or (abs(a - e) <= rtol * max(abs(a), abs(e)))
        if not same:
            problems.append(f"number {k + 1}: printed {a!r}, the text says {e!r} (rtol {rtol:g})")
    if problems:
        problems.append(f"--- printed\n{actual}")
    return problems


def _needs(code: str) -> list[str]:
    return [name for name, (pattern, _) in _EXTRAS.items() if pattern.search(code)]


BLOCKS = [b for page in PAGES for b in python_blocks(page)]


def test_every_page_has_been_read():
    assert README in PAGES and len(PAGES) >= 10
    assert len(BLOCKS) >= 20, [b.id for b in BLOCKS]
    readme = [b for b in BLOCKS if b.path == README]
    assert len(readme) >= 5 and all(b.expected is not None for b in readme)


@pytest.mark.parametrize("block", BLOCKS, ids=[b.id for b in BLOCKS])
def test_python_block_runs_alone_and_prints_what_the_text_says(block, tmp_path):
    assert not str(tmp_path.resolve()).startswith(str(ROOT)), "the block must run outside the repository"
    missing = [n for n in _needs(block.code) if not _EXTRAS[n][1]()]
    if missing:
        pytest.skip(f"needs {', '.join(missing)} (pip install '.[test]')")
    proc = run_block(block, tmp_path)
    assert proc.returncode == 0, f"{block.id} failed:\n{proc.stderr[-3000:]}"
    if block.expected is not None:
        problems = compare_output(proc.stdout, block.expected, block.rtol)
        assert not problems, f"{block.id}:\n" + "\n".join(problems)


# -- the comparison itself ----------------------------------------------------------------------------


def test_compare_output_reads_numbers_and_text():
    assert compare_output("E = 1.0000001 J\n[1 2]", "E = 1.0 J\n[1  2]", 1e-6) == []
    assert compare_output("E = 1.01 J", "E = 1.0 J", 1e-6)  # a number off
    assert compare_output("E = 1.0 kJ", "E = 1.0 J", 1e-6)  # the text off
    assert compare_output("12", "1 2", 1e-6)  # two numbers are not one
    assert compare_output("[0.3 -4.04]", "[0.3 -4.04 1.0]", 1e-6)  # one number missing
    assert compare_output("-0.0", "0.0", 1e-6) == []


def test_blocks_are_parsed_with_their_expected_output(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("text\n\n```python\nprint(1)\n```\n\n<!-- docs-test: rtol=1e-3 -->\n```text\n1\n```\n\n"
                    "```python\nprint(2)\n```\n\nsome prose\n\n```text\n2\n```\n\n```bash\nls\n```\n")
    first, second = python_blocks(page)
    assert (first.line, first.code, first.expected, first.rtol) == (3, "print(1)\n", "1\n", 1e-3)
    assert second.expected is None  # prose between: not its output
    page.write_text("<!-- docs-test: file=pkg/mod.py -->\n```python\nX = 1\n```\n\n```python\n"
                    "from pkg.mod import X\nprint(X)\n```\n")
    (block,) = python_blocks(page)  # the module is not run: it is written beside the block
    assert block.files == {"pkg/mod.py": "X = 1\n"} and block.code == "from pkg.mod import X\nprint(X)\n"
    proc = run_block(block, tmp_path)
    assert proc.returncode == 0 and proc.stdout == "1\n", proc.stderr


# -- the README and the docs as documents -------------------------------------------------------------

_NOTEBOOK = re.compile(r"stop [0-9]+|wave2\.md|wave2 §")
_DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b|\b(?:January|February|March|April|May|June|July|August|September|"
                   r"October|November|December) 20\d\d\b")
_HASH = re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}\b")


def test_readme_is_short_and_starts_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    assert len(text.encode()) < 20_000
    first = _FENCE.search(text)
    assert first.group(1) == "bash"
    lines = first.group(2).splitlines()
    assert lines[0].startswith('python -m pip install ".[plot]" && redmax run reference/05 --plot energy.png')
    assert lines[1].startswith('python -m pip install ".[test]" && python -m pytest -q -n auto')
    ci = (ROOT / ".ci" / "run").read_text()
    assert 'python -m pip install ".[test]" && python -m pytest -q -n auto\n' in ci  # CI runs the README's command
    assert "mkdocs build --strict" in ci


@pytest.mark.parametrize("page", [p for p in PAGES if p.name != "derivatives.md"], ids=lambda p: p.name)
def test_no_lab_notebook(page):
    text = page.read_text(encoding="utf-8")
    assert not _NOTEBOOK.findall(text)
    assert not _DATE.findall(text), "no dates: timings are current or gone"
    assert not _HASH.findall(text), "no commit hashes"


def test_site_lists_every_page_and_the_api():
    nav = (ROOT / "mkdocs.yml").read_text()
    listed = set(re.findall(r":\s*([\w/.-]+\.md)\s*$", nav, re.M))
    pages = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")}
    assert listed == pages
    import redmax as rm

    api = "\n".join(p.read_text() for p in (ROOT / "docs" / "api").glob("*.md"))
    rendered = set(re.findall(r"^::: (redmax[\w.]*)", api, re.M))
    whole = {m for m in rendered if m.count(".") == 1}  # modules rendered with all their public members
    for name in rm.__all__:
        if name in ("__version__", "dynamics", "kinematics"):  # their functions are on the package page
            continue
        obj = getattr(rm, name)
        if isinstance(obj, types.ModuleType):
            assert obj.__name__ in rendered, f"module rm.{name} has no API page"
            continue
        package = ".".join(obj.__module__.split(".")[:2])  # e.g. redmax.joints for rm.Revolute
        in_package_page = package in whole and obj.__name__ in getattr(importlib.import_module(package), "__all__", ())
        assert f"redmax.{name}" in rendered or in_package_page, f"rm.{name} is in no API page"


def test_scene_file_examples_load(tmp_path):
    """The complete scene files of docs/scene-files.md load and simulate (moved here with the README's example)."""
    from redmax import scenes

    page = (ROOT / "docs" / "scene-files.md").read_text(encoding="utf-8")
    files = [m.group(2) for m in _FENCE.finditer(page) if m.group(1) == "toml" and "format =" in m.group(2)]
    assert files
    for k, toml in enumerate(files):
        path = tmp_path / f"example{k}.toml"
        path.write_text(toml)
        s = scenes.load(path)
        assert s.simulate(duration=0.1).t.size == round(0.1 / s.dt) + 1
    first = scenes.load(tmp_path / "example0.toml")
    assert first.model.forces[0].name == "tether" and first.simulate(duration=0.1).t.size == 11


# -- benchmarks/report.py ------------------------------------------------------------------------------


def test_benchmark_report_rewrites_only_its_sections(tmp_path):
    spec = importlib.util.spec_from_file_location("report", ROOT / "benchmarks" / "report.py")
    report = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(report)
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    for name in report.BENCHMARKS:
        assert (ROOT / "benchmarks" / f"{name}.py").exists(), name
        assert report.begin(name) in page and report.end(name) in page, f"docs/benchmarks.md has no {name} section"
    doc = tmp_path / "b.md"
    doc.write_text(f"# B\n\nbefore\n\n{report.begin('step')}\nold\n{report.end('step')}\n\nafter\n")
    report.replace_section(doc, "step", "new table")
    text = doc.read_text()
    assert "old" not in text and "new table" in text and text.startswith("# B\n\nbefore\n") and "after" in text


def test_benchmark_compare_takes_script_names_and_refuses_unknown_ones():
    spec = importlib.util.spec_from_file_location("compare", ROOT / "benchmarks" / "compare.py")
    compare = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(compare)
    assert compare.script_names(["step", "vs_pinocchio.py"]) == ["step.py", "vs_pinocchio.py"]
    with pytest.raises(SystemExit, match=r"no benchmark script no_such\.py .*step\.py"):
        compare.script_names(["no_such"])


# -- refresh the expected outputs ------------------------------------------------------------------------


def _update(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as tmp:
        edits = []
        for block in python_blocks(path):
            proc = run_block(block, Path(tmp))
            print(f"{block.id}: exit {proc.returncode}\n{proc.stdout}", end="")
            if proc.returncode:
                print(proc.stderr[-2000:])
            elif block.expected_span is not None:
                edits.append((block.expected_span, proc.stdout))
    for (a, b), out in sorted(edits, reverse=True):
        text = text[:a] + out + text[b:]
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] != "--update":
        sys.exit("usage: python tests/house/test_docs.py --update FILE.md [FILE.md ...]")
    for arg in sys.argv[2:]:
        _update(Path(arg).resolve())
