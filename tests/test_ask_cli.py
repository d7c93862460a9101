"""`gpu-advisor ask`: non-interactive answers, output formats, exit codes, and the follow-up session driven
through ordinary streams (the pseudo-terminal test is in test_ask_pty.py)."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import test_ask_fakes as fakes
from gpu_advisor.ask import api
from gpu_advisor.cli.ask_args import add_ask_parser
from gpu_advisor.cli.ask import run_ask
from gpu_advisor.ask.parser import parse_question
from gpu_advisor.ask.questions import AnswerError, load_questions, parse_answer, plan_questions

SEEDS = [p.read_text(encoding="utf-8").splitlines()[0] for p in sorted(Path("/work/shared/seeds").glob("*.txt"))]
REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def fake_advisor(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(api, "_recommend", fakes.fake_recommend)
    fakes.CALLS.clear()


class TTYStringIO(io.StringIO):
    def isatty(self) -> bool:
        return True


def args_for(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_ask_parser(parser.add_subparsers(dest="command"))
    return parser.parse_args(["ask", *argv])


def run(*argv: str, stdin: io.StringIO | None = None) -> tuple[int, str]:
    out = io.StringIO()
    code = run_ask(args_for(*argv), stdin=stdin or io.StringIO(""), stdout=out)
    return code, out.getvalue()


@pytest.mark.parametrize("question", SEEDS)
def test_seed_questions_answer_without_input(question: str) -> None:
    code, out = run(question, "--no-input")
    assert code == 0
    assert "我理解到的" in out and "推荐配置" in out and "ecs." in out
    assert "\x1b[" not in out  # not a terminal: no ANSI


def test_assumptions_are_stated() -> None:
    code, out = run(SEEDS[-1], "--no-input")
    assert code == 0 and "假设" in out  # the task was assumed


def test_json_output_is_machine_readable() -> None:
    code, out = run("Train SegFormer at 1024x1024, batch 8, Hangzhou", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["lang"] == "en"
    assert doc["parsed"]["workload_fields"]["input_size"] == [1024, 1024]
    assert doc["recommendation"]["instance"]


def test_markdown_output() -> None:
    code, out = run("语义分割 1024x1024 batch 8", "--markdown", "--lang", "en")
    assert code == 0 and out.startswith("> ") and "| Input size | 1024×1024 | 1024x1024 |" in out
    assert "## Recommendation" in out


def test_memory_chart_against_the_card() -> None:
    code, out = run("语义分割 2048x2048 batch 8", "--no-input")
    assert code == 0 and "单卡显存" in out and "█" in out and "80.0 GiB" in out


def test_bad_input_exit_2_names_the_field(capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run("semantic segmentation with batch 0", "--no-input")
    assert code == 2 and "batch_size_per_gpu" in capsys.readouterr().err


def test_unexpected_failure_exit_1_without_traceback(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    def boom(workload: object, lang: str) -> None:
        raise RuntimeError("kaput")

    monkeypatch.setattr(api, "_recommend", boom)
    code, _ = run("语义分割", "--no-input")
    err = capsys.readouterr().err
    assert code == 1 and "--debug" in err and "Traceback" not in err
    code, _ = run("语义分割", "--no-input", "--debug")
    assert code == 1 and "Traceback" in capsys.readouterr().err


def test_non_tty_stdin_never_prompts() -> None:
    code, out = run("语义分割", stdin=io.StringIO("b\nb\n"))
    assert code == 0 and "(1/" not in out and len(fakes.CALLS) == 1


def test_planner_asks_what_changes_the_answer_most() -> None:
    planned = [q.field for q in plan_questions(parse_question("在阿里云上训练语义分割模型需要多大的GPU和内存？"))]
    assert planned[:3] == ["model", "input_size", "batch_size_per_gpu"]
    planned = [q.field for q in plan_questions(parse_question("LoRA 微调 Llama 3 8B"))]
    assert "params_billion" not in planned and "finetune_method" not in planned and planned[0] == "seq_len"
    assert [q.field for q in plan_questions(parse_question("深度学习模型训练"))][0] == "task"


def test_every_question_has_both_languages_and_a_why() -> None:
    for q in load_questions().questions.values():
        assert q.text.zh and q.text.en and q.why.zh and q.why.en and q.choices


@pytest.mark.parametrize("field,answer,value", [
    ("input_size", "c", (1024, 1024)), ("input_size", "768", (768, 768)), ("input_size", "2K", (1440, 2560)),
    ("batch_size_per_gpu", "12", 12), ("num_samples", "5万张", 50000), ("precision", "bf16", "bf16_amp"),
    ("interruptible", "是", True), ("interruptible", "no", False), ("model", "Mask2Former", "Mask2Former"),
    ("params_billion", "70亿参数", 7), ("region", "新加坡", "ap-southeast-1"), ("budget_per_hour", "30元/小时", 30)])
def test_answers_are_read(field: str, answer: str, value: object) -> None:
    assert parse_answer(load_questions().questions[field], answer) == value


def test_bad_answer_is_explained() -> None:
    with pytest.raises(AnswerError):
        parse_answer(load_questions().questions["batch_size_per_gpu"], "lots")
    with pytest.raises(AnswerError):
        parse_answer(load_questions().questions["batch_size_per_gpu"], "0")


def test_session_over_streams_why_default_and_how() -> None:
    stdin = TTYStringIO("为什么\n\nd\n12\nhuh\n\n\nhow 1\nhow\n\n")
    code, out = run("在阿里云上训练语义分割模型需要多大的GPU和内存？", stdin=stdin)
    assert code == 0
    assert "(1/5) 模型" in out and "激活显存" in out           # question 1 and its why
    assert "按各选项，顾问会选择" in out and "→ ecs." in out     # the what-if under why
    assert "无法把“huh”理解为" in out                          # a bad answer is re-asked
    assert "推荐配置" in out and "gpu.fit — 放得下的最小卡" in out  # answer, then how 1
    final = fakes.CALLS[-1]
    assert final["input_size"] == [1024, 2048] and final["batch_size_per_gpu"] == 12


def test_module_entry_point_runs() -> None:
    script = (f"import sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); import test_ask_fakes as f; f.install(); "
              "from gpu_advisor.cli.__main__ import main; sys.exit(main(['ask', '语义分割 1024x1024', '--no-input']))")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "推荐配置" in proc.stdout
