"""`python -m sliceportal.cli COMMAND`: the `sliceportal` command through the interpreter, for
supervisors that start children with `sys.executable` (as `sliceportal serve` does)."""

from __future__ import annotations

import sys

from sliceportal.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
