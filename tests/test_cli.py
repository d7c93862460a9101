"""The `gpu-advisor` command as a user runs it: exit codes, languages, JSON, stdin."""

from __future__ import annotations

import io
import json

import pytest

from gpu_advisor.kb.catalog_loader import load_catalog
from gpu_advisor.cli import main


def run(argv: list[str], stdin: str = "") -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, stdin=io.StringIO(stdin), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def test_recommend_json_from_flags():
    code, out, _ = run(["recommend", "--task", "semantic_segmentation", "--model", "DeepLabV3+", "--backbone",
                        "R-50-D8", "--input-size", "1024", "1024", "--batch-size-per-gpu", "8", "--json"])
    assert code == 0
    data = json.loads(out)
    assert load_catalog().is_known_type(data["instance"]["instance_type"])


def test_list_fields_take_comma_separated_flags():
    base = ["estimate", "--task", "llm_finetune", "--model", "Llama 3.1 8B", "--finetune-method", "lora"]
    code, out, _ = run(base + ["--lora-targets", "q_proj, v_proj"])
    assert code == 0
    code, every, _ = run(base)
    assert json.loads(out)["memory"]["allocated_peak_gib"] < json.loads(every)["memory"]["allocated_peak_gib"]


def test_recommend_workload_from_stdin_renders_chinese():
    code, out, _ = run(["recommend", "--workload", "-"], stdin="task: semantic_segmentation\nlang: zh\n")
    assert code == 0 and "推荐规格" in out


@pytest.mark.parametrize("argv, field", [
    (["recommend", "--task", "semantic_segmentation", "--batch-size-per-gpu", "0"], "batch_size_per_gpu"),
    (["recommend", "--task", "teleportation"], "task"),
    (["recommend", "--task", "semantic_segmentation", "--input-size", "5", "5"], "input_size"),
    (["recommend", "--task", "semantic_segmentation", "--region", "mars-1; rm -rf"], "region"),
])
@pytest.mark.parametrize("lang", ["zh", "en"])
def test_bad_input_exits_2_naming_the_field(argv, field, lang):
    code, out, err = run([*argv, "--lang", lang])
    assert code == 2 and out == ""
    assert field in err and "Traceback" not in err


def test_unknown_model_exits_2_with_suggestions():
    code, _, err = run(["recommend", "--task", "semantic_segmentation", "--model", "DeepLabV4+", "--lang", "en"])
    assert code == 2
    assert "model" in err and "did you mean" in err


def test_bad_workload_file_exits_2():
    code, _, err = run(["recommend", "--workload", "-"], stdin="[1, 2, 3]\n")
    assert code == 2 and "workload" in err


def test_estimate_jsonl_keeps_order_and_reports_errors():
    lines = [json.dumps({"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "lora"}),
             "{not json", json.dumps({"task": "semantic_segmentation", "batch_size_per_gpu": -1})]
    code, out, _ = run(["estimate", "--jsonl", "-"], stdin="\n".join(lines) + "\n")
    results = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and len(results) == 3
    assert "memory" in results[0] and "error" in results[1] and results[2]["error"]["field"] == "batch_size_per_gpu"


def test_catalog_json_lists_the_documented_keys():
    code, out, _ = run(["catalog", "--gpu", "A10", "--json"])
    rows = json.loads(out)
    assert code == 0 and rows
    for key in ("instance_type", "vcpu", "memory_gib", "gpu_count", "gpu_model", "gpu_memory_gib", "source", "as_of"):
        assert key in rows[0]


def test_explain_and_version():
    code, out, _ = run(["explain", "NET-MULTINODE", "--lang", "en"])
    assert code == 0 and json.loads(out)["id"] == "NET-MULTINODE"
    code, _, err = run(["explain", "NET-MULTINOD", "--lang", "en"])
    assert code == 2 and "NET-MULTINODE" in err
    assert run(["--version"])[0] == 0


def test_catalog_override_prices_change_the_answer(tmp_path):
    override = tmp_path / "prices.yaml"
    override.write_text(
        "prices:\n"
        "  - type: ecs.gn8is.2xlarge\n    region: cn-hangzhou\n    billing: pay-as-you-go list price, compute only\n"
        "    price_per_hour: 1.0\n    currency: CNY\n    source: test fixture (not a real price)\n    as_of: '2026-11-29'\n",
        encoding="utf-8")
    argv = ["recommend", "--task", "semantic_segmentation", "--json", "--lang", "en"]
    code, out, _ = run([*argv, "--catalog-override", str(override)])
    assert code == 0
    data = json.loads(out)
    assert data["instance"]["instance_type"] == "ecs.gn8is.2xlarge"
    assert data["instance"]["price_per_hour"] == 1.0 and data["instance"]["price_as_of"] == "2026-11-29"
    code, _, err = run([*argv, "--catalog-override", str(tmp_path / "missing.yaml")])
    assert code != 0 and "Traceback" not in err


def test_only_the_command_given_builds_workload_flags():
    """`gpu-advisor serve` (and every command but recommend / estimate) builds its parser without importing the
    Workload model; recommend and estimate still get one flag per Workload field."""
    import subprocess
    import sys

    from gpu_advisor.cli import build_parser

    script = ("import sys\nfrom gpu_advisor.cli import build_parser\nbuild_parser(['serve', '--transport', 'stdio'])\n"
              "print(sorted(m for m in sys.modules if m.startswith('gpu_advisor')))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "gpu_advisor.workload" not in done.stdout
    for command in ("recommend", "estimate"):
        parser, _ = build_parser([command, "--task", "semantic_segmentation"])
        args = parser.parse_args([command, "--task", "semantic_segmentation", "--batch-size-per-gpu", "4"])
        assert (args.task, args.batch_size_per_gpu) == ("semantic_segmentation", "4")
