"""Decoder-LLM serving speed (gpu_advisor.costing.decode) and what the answer says of it (plan/serving.py).

The physics is checked on numbers computed by hand from its formulas, the bench against the published rows it reads
(bench/data/llm_serving_measured.csv), and the answer on workloads: a stated output length gives tokens/s, TTFT and
requests/s first in the answer; a stated request rate sets the replica count; no output length says what is missing.
"""

from __future__ import annotations

import io
import math
import runpy
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from gpu_advisor import Workload, recommend
from gpu_advisor.ask.parser import parse_question
from gpu_advisor.costing.decode import DECODE_HBM, PREFILL_UTIL, Replica, closed_loop, decode_step, prefill_time

BENCH = Path(__file__).resolve().parent.parent / "bench" / "serve_throughput_accuracy.py"

# Llama-2-7B on one A100 80 GB SXM: 13.48 GB of bf16 weights, 512 KiB of KV per token, 2,039 GB/s, 312 TFLOPS
A100_7B = Replica(bw_gb_s=2039.0, peak_tflops=312.0, tp=1, weights_bytes=6.74e9 * 2, active_share=1.0,
                  kv_bytes_token=524288.0, active_params=6.74e9, layers=32, hidden=4096)


def test_decode_step_is_bytes_over_bandwidth_at_batch_one():
    fast, slow = decode_step(A100_7B, 1, 0, 0), decode_step(A100_7B, 1, 0, 1)
    assert fast == pytest.approx(13.48e9 / (2039e9 * DECODE_HBM.high))
    assert slow == pytest.approx(13.48e9 / (2039e9 * DECODE_HBM.low))


def test_kv_cache_of_the_batch_adds_to_the_step():
    base = decode_step(A100_7B, 16, 0, 0)
    with_kv = decode_step(A100_7B, 16, 1000, 0)
    assert with_kv - base == pytest.approx(16 * 1000 * 524288 / (2039e9 * DECODE_HBM.high))


def test_prefill_is_compute_bound():
    assert prefill_time(A100_7B, 2048, 0) == pytest.approx(2 * 6.74e9 * 2048 / (312e12 * PREFILL_UTIL.high))


def test_tensor_parallel_adds_all_reduces_and_splits_the_weights():
    tp2 = Replica(bw_gb_s=2039.0, peak_tflops=312.0, tp=2, weights_bytes=6.74e9, active_share=1.0,
                  kv_bytes_token=524288.0, active_params=6.74e9, layers=32, hidden=4096, link_gb_s=(180.0, 255.0))
    alone = 6.74e9 / (2039e9 * DECODE_HBM.high)
    step = decode_step(tp2, 1, 0, 0)
    # 2 all-reduces per layer: a fixed latency each plus 4096 x 2 bytes x 2 (t-1)/t over the fast link
    assert step == pytest.approx(alone + 64 * (6e-6 + 4096 * 2 * 2 * 0.5 / 255e9))


def test_closed_loop_little_law():
    sp = closed_loop(A100_7B, 32, 2000, 500)
    for end in (0, 1):
        latency = 32 * sp.prefill[end] + 500 * sp.step[end]
        assert sp.rps[1 - end] == pytest.approx(32 / latency)
        assert sp.tpot[end] == pytest.approx(sp.step[end] + 31 * sp.prefill[end] / 500)
    assert sp.user_tok_s[0] < sp.user_tok_s[1] and sp.ttft[0] < sp.ttft[1]
    # more users share the replica: each one is slower, the replica serves more
    more = closed_loop(A100_7B, 64, 2000, 500)
    assert more.user_tok_s[1] < sp.user_tok_s[1] and more.rps[1] > sp.rps[1]


def test_bench_check_rows_mostly_inside_and_derive_rows_kept_apart():
    module = runpy.run_path(str(BENCH))
    out = io.StringIO()
    with redirect_stdout(out):
        assert module["main"](["bench"]) == 0
    text = out.getvalue()
    line = next(x for x in text.splitlines() if x.startswith("check rows inside"))
    hit, n = (int(v) for v in line.rsplit(" ", 1)[1].split("/"))
    assert n >= 70 and hit / n >= 0.8, line
    assert "derive rows inside" in text and "queue beyond the engine's running batch" in text


def _answer(**fields):
    w = Workload(task="inference", lang="en", **fields)
    return recommend(w, lang="en")


def test_answer_leads_with_tokens_per_second_and_ttft():
    rec = _answer(model="Qwen2.5-72B-Instruct", seq_len=2548, output_tokens=500, concurrent_users=50,
                  batch_size_per_gpu=50)
    first = rec.render("en").split("\n")
    lead = next(line for line in first if "output tokens/s per user" in line)
    assert "at 50 concurrent" in lead and "TTFT" in lead and "requests/s a replica" in lead


def test_stated_rate_sets_the_replicas():
    one = _answer(model="Llama 3.1 8B", seq_len=1200, output_tokens=200, requests_per_second=1)
    many = _answer(model="Llama 3.1 8B", seq_len=1200, output_tokens=200, requests_per_second=40)
    text = many.render("en")
    assert "40 requests/s: " in text
    replicas = int(text.split("40 requests/s: ")[1].split(" ")[0])
    assert replicas > 1
    assert "1 requests/s: 1 replica " in one.render("en")


def test_no_output_length_says_what_is_missing():
    text = _answer(model="Llama 3.1 8B", seq_len=2048, concurrent_users=8, batch_size_per_gpu=8).render("en")
    assert "Decode speed" in text and "output length is not stated" in text


def test_output_must_be_shorter_than_the_sequence():
    with pytest.raises(ValueError, match="output_tokens"):
        Workload(task="inference", model="Llama 3.1 8B", seq_len=500, output_tokens=500)


@pytest.mark.parametrize("question, prompt, out", [
    ("Serve Qwen2.5-72B-Instruct for 50 concurrent users, average prompt 2k tokens, output 500 tokens", 2048, 500),
    ("部署 Qwen2.5-7B-Instruct，并发 32，平均输入 3000 token，输出 500 token", 3000, 500),
    ("Llama 3.1 8B serving, 1000 input tokens / 200 output tokens, 20 requests per second", 1000, 200),
])
def test_parser_keeps_the_output_length(question, prompt, out):
    fields = parse_question(question).workload_fields
    assert fields["output_tokens"] == out and fields["seq_len"] == prompt + out
    assert not math.isnan(fields["seq_len"])


def test_a_rate_without_concurrency_is_spoken_of_at_the_load_it_brings():
    text = _answer(model="Llama 3.1 8B", seq_len=1200, output_tokens=200, requests_per_second=5).render("en")
    lead = next(line for line in text.split("\n") if "output tokens/s per user" in line)
    n = int(lead.split("about ")[1].split(" sequences")[0])
    # fewer sequences than a full replica (vLLM's max_num_seqs 256), and enough that the slow end meets the rate
    assert "at the rate's load" in lead and 1 < n < 256
