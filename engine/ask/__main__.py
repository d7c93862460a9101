"""`python -m gpu_advisor.ask QUESTION ...`: the `ask` command without the main CLI."""

from __future__ import annotations

import sys

from gpu_advisor.ask.cli import main

if __name__ == "__main__":
    sys.exit(main())
