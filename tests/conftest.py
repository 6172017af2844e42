"""Settings of the whole test suite.

The suite compiles redmax's kernels at Numba's optimisation level 1 (``NUMBA_OPT``; set it in the environment to
test another level, e.g. ``NUMBA_OPT=3`` for the optimised build users get).  Its cold run is dominated by
compilation, and level 1 compiles faster than Numba's default 3; the tests check values, never speed (speed is
the benchmarks' business, and they run at the default level).  Kernels cached at one level are never served at
another: the cache stamp includes the level (``redmax._kernel_cache.cache_stamp``).  This must run before Numba
is imported, which is why it lives here.
"""

import os

os.environ.setdefault("NUMBA_OPT", "1")
