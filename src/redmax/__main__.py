"""``python -m redmax ...`` runs the command line (see ``redmax.cli``)."""

import sys

from redmax.cli import main

sys.exit(main())
