"""Concurrency: many threads share one knowledge base and one durable-rules engine; no session crosses.

- 32 threads x 1,000 rule-engine evaluations (facts precomputed from mixed workloads) give exactly the
  firings of sequential evaluation, and resident memory stays bounded meanwhile: RSS is sampled once a quarter
  of the evaluations are done (every thread running, glibc's per-thread malloc arenas created - they alone add
  ~20-30 MB that is reused, not leaked) and must grow by less than 10 MB over the remaining 24,000;
- a smaller recommend()-level run: 8 threads x 12 full recommendations give the sequential answers.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any, Callable

from gpu_advisor import recommend
from gpu_advisor.advisor import evaluate_facts, get_knowledge
from gpu_advisor.validation import workload_from_dict

THREADS = 32
PER_THREAD = 1000
RSS_LIMIT_MB = 10.0

MIXED: list[dict[str, Any]] = [
    {"task": "semantic_segmentation", "model": "DeepLabV3+", "input_size": [1024, 1024], "batch_size_per_gpu": 8},
    {"task": "semantic_segmentation", "model": "SegFormer", "backbone": "MiT-B5", "num_gpus": 8, "interruptible": True},
    {"task": "object_detection", "model": "Mask R-CNN", "precision": "fp16_amp", "region": "ap-southeast-1"},
    {"task": "instance_segmentation", "batch_size_per_gpu": 16, "dataset_size_gb": 5000.0},
    {"task": "image_classification", "num_samples": 1_281_167, "epochs": 90, "augmentation": "heavy"},
    {"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "lora", "seq_len": 4096},
    {"task": "llm_finetune", "model": "Qwen2.5 72B", "finetune_method": "qlora", "expected_months_of_use": 12.0},
    {"task": "llm_pretrain", "model": "Llama 3.1 70B", "seq_len": 8192, "num_gpus": 64},
    {"task": "nlp_finetune", "model": "BERT-base", "budget_per_hour": 20.0},
    {"task": "inference", "model": "Qwen2.5 7B", "batch_size_per_gpu": 32, "region": "cn-beijing"},
    {"task": "inference", "model": "Llama 3.1 405B", "quantization": "int4"},
    {"task": "preprocessing", "data_loader_workers": 32, "dataset_size_gb": 200.0},
    {"task": "llm_finetune", "model": "Llama 3.1 70B", "seq_len": 131072, "num_gpus": 1},  # re-planned: SP over 32 GPUs
]


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def _key(firings) -> str:
    return json.dumps([(f.rule_id, f.matched, list(f.derived)) for f in firings], sort_keys=True, default=str)


def _rss_when(done: Callable[[], int], target: int, threads: list[threading.Thread]) -> float:
    """RSS once ``done()`` reaches ``target`` (polled from this thread), or when the threads have finished."""
    while done() < target and any(t.is_alive() for t in threads):
        time.sleep(0.02)
    return rss_mb()


def mixed_facts() -> list[dict[str, Any]]:
    return [evaluate_facts(workload_from_dict(w))[0] for w in MIXED]


def test_32_threads_x_1000_engine_evaluations_match_sequential() -> None:
    engine = get_knowledge().engine
    records = mixed_facts()
    expected = [engine.evaluate(r) for r in records]
    assert len({_key(e) for e in expected}) == len(records)  # the mix really is mixed: every record fires differently
    for i in range(200):  # warm-up before measuring memory
        engine.evaluate(records[i % len(records)])
    before_threads = rss_mb()
    start = threading.Barrier(THREADS)
    errors: list[str] = []
    counts = [0] * THREADS

    def worker(t: int) -> None:
        try:
            start.wait(timeout=60)
            for i in range(PER_THREAD):
                k = (t * 7 + i) % len(records)  # each thread walks the mix from its own offset
                if engine.evaluate(records[k]) != expected[k]:
                    errors.append(f"thread {t} evaluation {i}: record {k} differs")
                counts[t] += 1
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(f"thread {t}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=worker, args=(t,), daemon=True) for t in range(THREADS)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    quarter = _rss_when(lambda: sum(counts), THREADS * PER_THREAD // 4, threads)
    for thread in threads:
        thread.join(timeout=max(1.0, 600 - (time.monotonic() - began)))
    assert not any(t.is_alive() for t in threads), "threads still running after 600 s"
    assert errors == [], errors[:10]
    assert sum(counts) == THREADS * PER_THREAD
    after = rss_mb()
    print(f"\nRSS: {before_threads:.1f} MB before the threads, {quarter:.1f} MB at 25 %, {after:.1f} MB at 100 %")
    growth = after - quarter
    assert growth < RSS_LIMIT_MB, f"RSS grew {growth:.1f} MB over the last 24,000 threaded evaluations"


def test_threaded_recommend_matches_sequential() -> None:
    def dump(w: dict[str, Any], lang: str) -> str:
        return json.dumps(recommend(w, lang).model_dump(mode="json"), sort_keys=True)

    jobs = [(w, lang) for w in MIXED for lang in ("en", "zh")]
    expected = {i: dump(w, lang) for i, (w, lang) in enumerate(jobs)}
    errors: list[str] = []

    def worker(t: int) -> None:
        try:
            for n in range(12):
                i = (t * 5 + n) % len(jobs)
                if dump(*jobs[i]) != expected[i]:
                    errors.append(f"thread {t}: job {i} ({jobs[i][0]['task']}, {jobs[i][1]}) differs")
        except Exception as exc:  # noqa: BLE001
            errors.append(f"thread {t}: {type(exc).__name__}: {exc}")

    threads = [threading.Thread(target=worker, args=(t,), daemon=True) for t in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not any(t.is_alive() for t in threads)
    assert errors == [], errors[:10]


COLD = """
import hashlib, json, sys, threading
workloads = json.loads(sys.stdin.read())
answers = [None] * len(workloads)

def answer(i):
    from gpu_advisor import recommend
    rec = recommend(workloads[i])
    answers[i] = hashlib.sha256((rec.model_dump_json() + rec.render("zh") + rec.render("en")).encode()).hexdigest()

if sys.argv[1] == "threads":
    barrier = threading.Barrier(len(workloads))
    def run(i):
        barrier.wait()
        answer(i)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(workloads))]
    for t in threads: t.start()
    for t in threads: t.join()
else:
    for i in range(len(workloads)): answer(i)
print(json.dumps(answers))
"""


def test_first_answers_of_a_fresh_process_from_threads_match_sequential() -> None:
    """A support desk's threads all asking at once in a fresh process: the imports, the knowledge base and the
    planner's caches are loaded and filled concurrently, and the answers (JSON and both renders) are those of the
    same workloads answered one after another in another fresh process."""
    import subprocess
    import sys

    data = json.dumps(MIXED)
    runs = {mode: subprocess.run([sys.executable, "-c", COLD, mode], input=data, capture_output=True, text=True,
                                 timeout=300) for mode in ("threads", "sequential")}
    for mode, done in runs.items():
        assert done.returncode == 0, (mode, done.stderr[-2000:])
    threaded, sequential = (json.loads(runs[m].stdout) for m in ("threads", "sequential"))
    assert None not in threaded and threaded == sequential
