"""A real interactive `ask` session in a pseudo-terminal (pexpect): the follow-up questions appear, "why"
explains, Enter accepts defaults, the answer appears, "how 1" shows the rules."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SEED = "在阿里云上训练语义分割模型需要多大的GPU和内存？"


def spawn(tmp_path: Path, *argv: str, real: bool = False) -> "pexpect.spawn":
    script = tmp_path / "ask_session.py"
    install = "" if real else "import test_ask_fakes; test_ask_fakes.install()\n"
    script.write_text(f"import sys\nsys.path.insert(0, {str(TESTS)!r})\n{install}"
                      "from gpu_advisor.cli.ask import main\nsys.exit(main(sys.argv[1:]))\n", encoding="utf-8")
    child = pexpect.spawn(sys.executable, [str(script), *argv], cwd=str(REPO), encoding="utf-8", timeout=60,
                          dimensions=(50, 160), env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TERM": "xterm"})
    return child


def finish(child: "pexpect.spawn") -> int:
    child.expect(pexpect.EOF)
    child.close()
    return int(child.exitstatus if child.exitstatus is not None else -1)


def _advisor_importable() -> bool:
    try:
        importlib.import_module("gpu_advisor.advisor")
        return True
    except ImportError:
        return False


REAL = _advisor_importable()
PROMPT = r"\[默认: [^\]]*\] > "


def test_interactive_session_in_a_pty(tmp_path: Path) -> None:
    """Against the real advisor once it imports (the fake before that)."""
    child = spawn(tmp_path, SEED, real=REAL)
    child.expect("我理解到的")
    child.expect(r"\(1/5\) 模型")
    child.expect(PROMPT)
    child.sendline("为什么")
    child.expect("激活显存")                     # the why-text
    child.expect("按各选项，顾问会选择")          # what the advisor would pick for each choice
    child.expect(PROMPT)                         # asked again
    child.sendline("")                           # Enter: the default (the task's typical model)
    child.expect(r"\(2/5\) 输入尺寸")
    child.expect(PROMPT)
    child.sendline("1024x1024")
    child.expect(r"\(3/5\) 每卡 batch")
    child.expect(PROMPT)
    child.sendline("?")
    child.expect("batch 成正比")
    child.expect(PROMPT)
    child.sendline("")                           # default batch
    child.expect(r"\(4/5\)")
    child.expect(PROMPT)
    child.sendline("好了")                        # answer now
    child.expect("推荐配置")
    child.expect(r"ecs\.")
    child.expect("单卡显存估算")
    child.expect(r"\[1\]")
    child.expect("how N")
    child.expect("> ")
    child.sendline("how 1")
    child.expect(r"\S+ — \S+")                  # rule id — title
    child.expect("> ")
    child.sendline("")
    assert finish(child) == 0


def test_english_session_and_no_input(tmp_path: Path) -> None:
    child = spawn(tmp_path, "Which GPU do I need to train a detection model?")
    child.expect("What I understood")
    child.expect(r"\(1/5\) Model")
    child.sendline("why?")
    child.expect("activation memory")
    child.sendline("done")
    child.expect("Recommendation")
    child.expect("> ")
    child.sendline("q")
    assert finish(child) == 0

    child = spawn(tmp_path, SEED, "--no-input")
    child.expect("推荐配置")
    assert "(1/" not in child.before
    assert finish(child) == 0
