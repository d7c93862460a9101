#!/usr/bin/env bash
# Print the Python interpreter that `make` builds .venv with (override: `make PYTHON=/path/to/python3.x`).
#
# The first candidate that is CPython 3.11 or 3.12 (durable-rules' C core does not import on 3.13), can make a venv
# with pip (venv + ensurepip) and has the headers durable-rules' C core compiles against (Python.h). The
# distribution's interpreters come first: Debian builds CPython with profile-guided optimisation and LTO (its
# changelog: "Enable LTO/PGO builds"), while pyenv (what PATH finds first on this project's machines) builds
# without them by default. On the same packages, Debian's 3.11.2 takes 17-27 % less CPU per answer than pyenv's
# 3.11.7 and executes 14 % fewer instructions per recommendation (README, "Benchmarks").
# Candidates: $GPU_ADVISOR_PYTHON_CANDIDATES (space-separated) if set.
set -u
candidates=${GPU_ADVISOR_PYTHON_CANDIDATES:-/usr/bin/python3.12 /usr/bin/python3.11 python3.12 python3.11 python3}
for p in $candidates; do
  command -v "$p" >/dev/null 2>&1 || continue
  "$p" - >/dev/null 2>&1 <<'EOF' || continue
import os, sys, sysconfig
if sys.implementation.name != "cpython" or not (3, 11) <= sys.version_info[:2] < (3, 13):
    sys.exit(1)
import ensurepip, venv  # noqa: F401,E401 - Debian ships venv's pip in a separate package
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))
EOF
  command -v "$p"
  exit 0
done
exit 1
