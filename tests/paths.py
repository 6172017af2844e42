"""Where the tests find the repository's files: one place, so that moving a test module between folders moves no
path (not collected: no test_ prefix); and what a command printed for its user, without the first-use compile
notes."""

from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
DATA = TESTS / "data"  # meshes of the body tests
REFERENCE = TESTS / "reference"  # pinned final energies of the built-in scenes
DOCS = REPO / "docs"
EXAMPLES = REPO / "examples"
ARM_URDF = EXAMPLES / "data" / "arm.urdf"  # the small arm of the examples: fixed base, 4 DOFs


def user_messages(err: str) -> str:
    """``err`` without the first-use compile notes (``redmax: compiling ...`` / ``redmax: compiled ... in``), which
    a cold kernel cache adds to any command's standard error."""
    import re

    return "".join(line for line in err.splitlines(keepends=True)
                   if not re.match(r"(redmax: |WARNING.*)?compil(ing|ed) \w+ ", line))
