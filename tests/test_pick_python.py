"""tools/pick_python.sh: the interpreter `make` builds .venv with."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "tools" / "pick_python.sh"


def pick(tmp_path: Path, *candidates: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GPU_ADVISOR_PYTHON_CANDIDATES": " ".join(candidates)}
    return subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)


def fake(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return str(path)


def test_the_first_usable_interpreter_wins(tmp_path: Path) -> None:
    broken = fake(tmp_path, "python3.12", "exit 1")  # runs, but fails the check (like a 3.13 or one without venv)
    done = pick(tmp_path, str(tmp_path / "missing"), broken, sys.executable, "python3")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == sys.executable


def test_none_usable_prints_nothing_and_fails(tmp_path: Path) -> None:
    done = pick(tmp_path, fake(tmp_path, "python3.11", "exit 1"), str(tmp_path / "missing"))
    assert done.returncode == 1 and done.stdout == ""


def other_versions() -> list[str]:
    """Real interpreters of 3.10 or 3.13 on this machine (pyenv's shims fail for versions not selected: not those)."""
    found = []
    names = {shutil.which("python3.13"), shutil.which("python3.10"),
             *map(str, Path.home().glob(".pyenv/versions/3.1[03]*/bin/python3.1[03]"))}
    for name in sorted(n for n in names if n):
        ran = subprocess.run([name, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True,
                             timeout=60)
        if ran.returncode == 0 and ran.stdout.strip() in ("(3, 10)", "(3, 13)"):
            found.append(name)
    return found


def test_versions_outside_311_312_are_refused(tmp_path: Path) -> None:
    others = other_versions()
    if not others:
        pytest.skip("no Python 3.10 or 3.13 on this machine")
    done = pick(tmp_path, *others)
    assert done.returncode == 1 and done.stdout == "", done.stdout


def test_the_default_choice_can_build_the_venv(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "GPU_ADVISOR_PYTHON_CANDIDATES"}
    done = subprocess.run(["bash", str(SCRIPT)], capture_output=True, text=True, env=env, timeout=60)
    assert done.returncode == 0, "no CPython 3.11 / 3.12 with venv and headers on this machine"
    chosen = done.stdout.strip()
    check = ("import os, sys, sysconfig, venv, ensurepip; "
             "print(sys.version_info[:2], os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))")
    probe = subprocess.run([chosen, "-c", check], capture_output=True, text=True, timeout=60)
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() in ("(3, 11) True", "(3, 12) True"), probe.stdout
