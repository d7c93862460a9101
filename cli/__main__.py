"""`python -m gpu_advisor.cli ...`: the `gpu-advisor` command without its console script."""

from __future__ import annotations

import sys

from gpu_advisor.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
