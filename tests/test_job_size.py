"""The sample count behind time and cost: the user's, else from the dataset's size, else a reference dataset."""

from __future__ import annotations

import pytest

from gpu_advisor import recommend
from gpu_advisor.advisor import get_knowledge
from gpu_advisor.plan.defaults import resolve_job
from gpu_advisor.validation import workload_from_dict


def _job(**fields):
    return resolve_job(workload_from_dict(fields), get_knowledge().catalog)


def _said(job, field: str) -> list[str]:
    return [n.text.en for n in job.assumptions if n.field == field]


def test_text_size_gives_tokens_over_seq_len() -> None:
    job = _job(task="llm_pretrain", model="Llama 3.1 8B", seq_len=4096, dataset_size_gb=2000)
    assert job.workload.num_samples == round(2000e9 / (4.0 * 4096))  # 4 bytes of text per token
    assert any("dataset_size_gb = 2000" in t and "4096 tokens per sample" in t for t in _said(job, "num_samples"))
    default_len = _job(task="llm_finetune", model="Qwen2.5 7B", dataset_size_gb=1)  # the resolved seq_len (2048)
    assert default_len.workload.num_samples == round(1e9 / (4.0 * default_len.workload.seq_len))


@pytest.mark.parametrize("task, per_image", [("object_detection", 18e9 / 118287), ("semantic_segmentation", 11e9 / 5000),
                                             ("image_classification", 147.9e9 / 1281167)])
def test_image_size_gives_images_at_the_reference_datasets_bytes_per_image(task: str, per_image: float) -> None:
    job = _job(task=task, dataset_size_gb=200)
    assert job.workload.num_samples == round(200e9 / per_image)
    # the task's schedule (a single pass put a detector's time 12x, a segmenter's 200x under a run), said as such
    schedule = {"object_detection": 12.0, "image_classification": 90.0,
                "semantic_segmentation": round(640000 / round(200e9 / per_image), 1)}[task]
    assert job.workload.epochs == schedule
    assert any(t.startswith("Epochs not given") for t in _said(job, "epochs"))
    assert not _said(job, "num_samples")[0].startswith("Job size not given")


def test_a_stated_sample_count_without_epochs_gets_the_named_datasets_or_the_tasks_schedule() -> None:
    """COCO's 1x (12 epochs), ADE20K's 160k iterations x 16 images (127 passes), ImageNet-21k's 90 epochs; an own
    dataset of 5,000 segmentation images: the 80k x 8 images of the reference schedule (128 passes); YOLO: the
    trainer's 100; a prototype and LLM pretraining: one pass, an LLM fine-tune 3, said as an assumption."""
    assert _job(task="object_detection", num_samples=8000).workload.epochs == 12
    assert _job(task="semantic_segmentation", num_samples=20210).workload.epochs == 127
    assert _job(task="image_classification", num_samples=14197122).workload.epochs == 90
    assert _job(task="semantic_segmentation", num_samples=5000).workload.epochs == 128
    assert _job(task="object_detection", model="YOLOv8m", num_samples=5000).workload.epochs == 100
    assert _job(task="nlp_finetune", num_samples=50000).workload.epochs == 3
    assert _job(task="semantic_segmentation", stage="prototype", num_samples=500).workload.epochs is None
    llm = _job(task="llm_finetune", model="Qwen2.5 7B", num_samples=50000)
    # an LLM fine-tune: the HF Trainer's / LLaMA-Factory's 3 epochs, said; pretraining: one pass
    assert llm.workload.epochs == 3 and any("num_train_epochs=3.0" in t for t in _said(llm, "epochs"))
    pre = _job(task="llm_pretrain", model="Qwen2.5 7B", num_samples=50000)
    assert pre.workload.epochs is None   # timed as one pass by costing/timing.py, which says so
    assert _job(task="object_detection", num_samples=8000, epochs=36).workload.epochs == 36


def test_the_users_count_wins_and_no_size_keeps_the_reference_dataset() -> None:
    assert _job(task="object_detection", dataset_size_gb=200, num_samples=5000).workload.num_samples == 5000
    reference = _job(task="object_detection")
    assert reference.workload.num_samples == 118287 and reference.workload.epochs == 12
    assert _job(task="inference", model="Llama 3.1 8B", dataset_size_gb=10).workload.num_samples is None


def test_a_pretraining_deadline_is_checked_from_the_dataset_size() -> None:
    """13B pretraining on 2 TB of text in two weeks: the deadline decides the plan (before, the time was unknown for
    want of num_samples, and the 13B model was estimated as the default 8B one). About 500 B tokens: 6 x 13e9 x 5e11 =
    3.9e22 FLOPs, about 170 h on 512 A100s at 40 % of their 312 dense bf16 TFLOPS, so the plan scales out to hundreds
    of GPUs over RDMA and says so first, or says with numbers why it cannot."""
    rec = recommend({"task": "llm_pretrain", "params_billion": 13, "dataset_size_gb": 2000, "deadline_hours": 336})
    assert rec.memory.profile.params_billion == pytest.approx(13)
    lead = rec.lead[0].en
    assert ("To finish within the 336 h deadline" in lead and "RDMA" in lead) or "336 h deadline cannot be met" in lead
    assert rec.instance.total_gpus >= 64 and rec.instance.nodes > 1
