"""The bilingual question parser: phrasings in Chinese and English -> the expected Workload fields."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpu_advisor.ask import parse_question
from gpu_advisor.ask.parser import detect_lang
from gpu_advisor.errors import WorkloadError
from gpu_advisor.workload import Workload

SEEDS = sorted(Path("/work/shared/seeds").glob("*.txt"))

# (question, language, subset of workload_fields that must be parsed exactly)
PHRASINGS: list[tuple[str, str, dict]] = [
    ("在阿里云上训练语义分割模型需要多大的GPU和内存？", "zh", {"task": "semantic_segmentation"}),
    ("深度学习模型训练需要什么样的阿里云服务器配置？", "zh", {"task": "image_classification"}),
    ("用DeepLabV3+ R-50训练Cityscapes，1024×1024，batch 8，8卡，bf16，杭州", "zh",
     {"task": "semantic_segmentation", "model": "DeepLabV3+", "backbone": "R-50", "input_size": [1024, 1024],
      "batch_size_per_gpu": 8, "num_gpus": 8, "precision": "bf16_amp", "region": "cn-hangzhou", "num_classes": 19}),
    ("两张A10够不够训练SegFormer-B5？图片2K分辨率，5万张，训练50轮", "zh",
     {"num_gpus": 2, "model": "SegFormer-B5", "input_size": [1440, 2560], "num_samples": 50000, "epochs": 50}),
    ("Fine-tune Llama 3.1 8B with LoRA, seq len 4096, bf16, budget 5000 CNY, within 48 hours, spot ok, Singapore", "en",
     {"task": "llm_finetune", "model": "Llama 3.1 8B", "finetune_method": "lora", "seq_len": 4096,
      "precision": "bf16", "budget_total": 5000, "deadline_hours": 48, "interruptible": True, "region": "ap-southeast-1"}),
    ("70亿参数的大模型QLoRA微调，每小时不超过 30 元，3天内完成，可中断", "zh",
     {"task": "llm_finetune", "params_billion": 7, "finetune_method": "qlora", "budget_per_hour": 30,
      "deadline_hours": 72, "interruptible": True, "stage": "finetune"}),
    ("部署Qwen2-7B做推理服务，上下文8k，并发16，北京", "zh",
     {"task": "inference", "stage": "serve", "model": "Qwen2-7B", "seq_len": 8192,
      "batch_size_per_gpu": 16, "region": "cn-beijing"}),
    ("Train YOLOv8 on 100k images at 1280x1280, batch size 16, 100 epochs, 4 GPUs, mixed precision", "en",
     {"task": "object_detection", "model": "YOLOv8", "num_samples": 100_000, "input_size": [1280, 1280],
      "batch_size_per_gpu": 16, "epochs": 100, "num_gpus": 4, "precision": "fp16_amp"}),
    ("预训练一个1.3B的语言模型，数据1.5TB，2台8卡A100，海外", "zh",
     {"task": "llm_pretrain", "params_billion": 1.3, "dataset_size_gb": 1500, "num_gpus": 16, "region": "international"}),
    ("Mask R-CNN实例分割，10万张图片，100GB数据，全参训练，fp32，batch 2", "zh",
     {"task": "instance_segmentation", "model": "Mask R-CNN", "num_samples": 100_000, "dataset_size_gb": 100,
      "precision": "fp32", "batch_size_per_gpu": 2}),
    ("How big a GPU do I need to train a semantic segmentation model on 4K images?", "en",
     {"task": "semantic_segmentation", "input_size": [2160, 3840]}),
    ("What server should I rent to serve a 13B LLM with int4 quantization in Hangzhou?", "en",
     {"task": "inference", "params_billion": 13, "quantization": "int4", "region": "cn-hangzhou"}),
    ("单卡训练ResNet-50图像分类，ImageNet，batch 256，90个epoch，混合精度", "zh",
     {"task": "image_classification", "num_gpus": 1, "model": "ResNet-50", "num_classes": 1000,
      "batch_size_per_gpu": 256, "epochs": 90, "precision": "fp16_amp"}),
    ("全参微调ChatGLM3-6B，序列长度2048，DeepSpeed ZeRO-3，梯度检查点，8卡", "zh",
     {"task": "llm_finetune", "finetune_method": "full", "model": "ChatGLM3-6B",
      "seq_len": 2048, "distributed": "zero3", "gradient_checkpointing": True, "num_gpus": 8}),
    ("I want to pretrain a 70B model from scratch, 1.5T tokens, budget 2 million CNY, overseas", "en",
     {"task": "llm_pretrain", "params_billion": 70, "budget_total": 2_000_000, "region": "international"}),
    ("Object detection with Faster R-CNN on COCO, 2 GPUs, batch 4, 12 epochs, cannot be interrupted", "en",
     {"task": "object_detection", "model": "Faster R-CNN", "num_classes": 80, "num_gpus": 2, "batch_size_per_gpu": 4,
      "epochs": 12, "interruptible": False}),
    ("想在北京用抢占式实例训练UNet做医学图像分割，512x512，2000张，预算每小时10块钱", "zh",
     {"task": "semantic_segmentation", "model": "UNet", "region": "cn-beijing", "interruptible": True,
      "input_size": [512, 512], "num_samples": 2000, "budget_per_hour": 10}),
    ("Fine-tune BERT-base for text classification, max length 512, batch size 32, 3 epochs, $3 per hour", "en",
     {"task": "nlp_finetune", "model": "BERT-base", "seq_len": 512, "batch_size_per_gpu": 32, "epochs": 3,
      "budget_per_hour": 21.6}),
    ("用4张V100训练Mask2Former Swin-L全景分割，1024x1024，强数据增强，一周内完成", "zh",
     {"task": "panoptic_segmentation", "num_gpus": 4, "model": "Mask2Former", "backbone": "Swin-L",
      "input_size": [1024, 1024], "augmentation": "heavy", "deadline_hours": 168}),
    ("Llama 2 70B inference with vLLM, 4k context, 8x A100, fp16", "en",
     {"task": "inference", "model": "Llama 2 70B", "seq_len": 4096, "num_gpus": 8,
      "precision": "fp16_amp"}),
    ("数据预处理，10万张图片，500GB，上海", "zh",
     {"task": "preprocessing", "num_samples": 100_000, "dataset_size_gb": 500, "region": "cn-shanghai"}),
    ("LoRA fine-tuning Qwen2.5-14B with rank 64 and 8-bit AdamW on 2 GPUs, budget 3000 yuan", "en",
     {"task": "llm_finetune", "model": "Qwen2.5-14B", "lora_rank": 64, "optimizer": "adamw_8bit",
      "num_gpus": 2, "budget_total": 3000}),
    ("训练一个千亿参数的大模型需要多少卡？", "zh", {"task": "llm_finetune", "params_billion": 100}),
    ("语义分割 HRNet-W48，1080p 视频帧，每张卡 2 张图，PyTorch 1.8，新加坡", "zh",
     {"task": "semantic_segmentation", "input_size": [1080, 1920], "batch_size_per_gpu": 2, "pytorch_version": "1.8",
      "region": "ap-southeast-1"}),
    ("Classify 50,000 images with ViT-B/16, 150 classes, 30 epochs, deadline 3 days, Beijing", "en",
     {"task": "image_classification", "model": "ViT-B/16", "num_samples": 50_000, "num_classes": 150, "epochs": 30,
      "deadline_hours": 72, "region": "cn-beijing"}),
    ("我们要长期使用半年，训练目标检测模型，预算1万元，batch为8，单卡", "zh",
     {"task": "object_detection", "expected_months_of_use": 6, "budget_total": 10_000, "batch_size_per_gpu": 8,
      "num_gpus": 1}),
    ("我想训练一个图像分割模型，大概20万张3000x4000的遥感图像，预算每月2万", "zh",
     {"task": "semantic_segmentation", "num_samples": 200_000, "input_size": [3000, 4000], "budget_per_hour": 27.78}),
    ("Can I fine-tune a 7B model on a single A10 with QLoRA?", "en",
     {"task": "llm_finetune", "params_billion": 7, "num_gpus": 1, "finetune_method": "qlora"}),
    ("serve SAM for 100 concurrent users in Beijing", "en",
     {"task": "inference", "model": "SAM", "batch_size_per_gpu": 100, "region": "cn-beijing"}),
]


@pytest.mark.parametrize("question,lang,expected", PHRASINGS, ids=[q[:28] for q, _, _ in PHRASINGS])
def test_phrasing_is_parsed(question: str, lang: str, expected: dict) -> None:
    parsed = parse_question(question)
    assert parsed.lang == lang
    got = {k: parsed.workload_fields.get(k) for k in expected}
    for key, value in expected.items():
        if isinstance(value, float | int) and not isinstance(value, bool) and got[key] is not None:
            assert got[key] == pytest.approx(value), key
        else:
            assert got[key] == value, key
    Workload(**parsed.workload_fields)  # always a valid Workload


def test_enough_phrasings_in_both_languages() -> None:
    langs = [lang for _, lang, _ in PHRASINGS]
    assert langs.count("zh") >= 10 and langs.count("en") >= 10


@pytest.mark.parametrize("seed", SEEDS, ids=[p.name for p in SEEDS])
def test_seed_questions_parse(seed: Path) -> None:
    question = seed.read_text(encoding="utf-8").splitlines()[0]
    parsed = parse_question(question)
    assert parsed.lang == "zh"
    Workload(**parsed.workload_fields)


def test_understood_names_the_words() -> None:
    parsed = parse_question("两张A10训练SegFormer，1024x1024")
    by_field = {u.field: u for u in parsed.understood}
    assert by_field["num_gpus"].matched == "两张A10"
    assert by_field["input_size"].matched == "1024x1024"
    assert any(h.kind == "gpu_preference" for h in parsed.hints)


def test_missing_task_is_an_assumption() -> None:
    parsed = parse_question("深度学习模型训练需要什么样的阿里云服务器配置？")
    assert [a.field for a in parsed.assumed] == ["task"]
    assert "task" not in parsed.stated()


@pytest.mark.parametrize("text,lang", [("训练 Llama 3 8B 需要几张卡", "zh"), ("Train a model in 杭州 within 3 days", "en"),
                                       ("hello", "en"), ("你好", "zh")])
def test_detect_lang(text: str, lang: str) -> None:
    assert detect_lang(text) == lang


@pytest.mark.parametrize("text,field", [("", "question"), ("   ", "question"), ("batch 0 语义分割", "batch_size_per_gpu"),
                                        ("train a segmentation model at 99999x99999", "input_size")])
def test_bad_input_names_the_field(text: str, field: str) -> None:
    with pytest.raises(WorkloadError) as info:
        parse_question(text)
    assert field in (info.value.field or "")


def test_user_text_is_data_not_code() -> None:
    parsed = parse_question("{{ 7*7 }} __import__('os').system('echo hi') 语义分割")
    assert parsed.workload_fields["task"] == "semantic_segmentation"
    assert "49" not in str(parsed.model_dump())


@pytest.mark.parametrize("question, rate, value", [("部署 ResNet-50 图像分类服务，每秒 200 张图", "每秒 200 张", 200),
                                                   ("serve ResNet-50 at 200 images/s", "200 images/s", 200),
                                                   ("Llama 3.1 8B 推理服务 50 QPS", "50 QPS", 50),
                                                   ("200 张/秒 的目标检测服务", "200 张/秒", 200)])
def test_a_request_rate_is_read_as_a_rate_not_a_dataset(question: str, rate: str, value: float) -> None:
    """A request rate is the serving load (requests_per_second, which the planner turns into replicas), never a
    dataset size; the words it came from are said back."""
    parsed = parse_question(question)
    assert "num_samples" not in parsed.workload_fields
    assert parsed.workload_fields["requests_per_second"] == value
    assert [u.matched for u in parsed.understood if u.field == "requests_per_second"] == [rate]


def test_image_counts_are_still_samples() -> None:
    assert parse_question("训练 DeepLabV3+，5000 张图片").workload_fields["num_samples"] == 5000
    assert parse_question("fine-tune Mask R-CNN on 12k images").workload_fields["num_samples"] == 12000


@pytest.mark.parametrize("question", ["200 张/秒 的目标检测服务", "ResNet-50 图像分类服务要多大显存", "我们的检测服务用什么GPU"])
def test_a_model_service_is_serving(question: str) -> None:
    assert parse_question(question).workload_fields["task"] == "inference"


def test_a_server_or_training_is_not_serving() -> None:
    assert parse_question("训练目标检测模型需要什么GPU服务器").workload_fields["task"] == "object_detection"
    assert parse_question("用阿里云服务训练图像分类模型").workload_fields["task"] == "image_classification"


@pytest.mark.parametrize("question, family", [("Stable Diffusion XL 微调需要多大显存", "扩散模型"),
                                              ("fine-tune Whisper large-v3 on my audio", "语音模型"),
                                              ("部署 Whisper 语音识别服务", "语音模型"), ("文生视频模型训练要多少卡", "视频生成模型")])
def test_a_model_family_without_a_profile_is_refused_not_answered_as_another_task(question: str, family: str) -> None:
    """These were answered as the default task (an image-classification CNN): a different job's numbers."""
    from gpu_advisor.errors import UnknownModelError

    with pytest.raises(UnknownModelError) as err:
        parse_question(question)
    assert err.value.field == "model" and family in err.value.message("zh")
    assert "no memory profile" in err.value.message("en")


def test_a_known_model_beside_such_words_is_answered() -> None:
    parsed = parse_question("Llama 3.1 8B fine-tune for text-to-image captions")
    assert parsed.workload_fields["model"] == "Llama 3.1 8B"


def test_cli_refuses_in_the_questions_language(capsys: pytest.CaptureFixture[str]) -> None:
    from gpu_advisor.cli.ask import main

    assert main(["--no-input", "部署 Whisper 语音识别服务"]) == 2
    assert "知识库中没有语音模型" in capsys.readouterr().err


@pytest.mark.parametrize("question, nodes, gpus", [
    ("Full fine-tune Llama 3.1 8B on 4x8 A100", 4, 32),
    ("全参微调 Qwen2.5-72B，4×8 A100", 4, 32),
    ("4 x 8 卡 A100 全参微调 Qwen2.5-72B 要多久", 4, 32),
    ("Full fine-tune Qwen2.5-72B on 2x8 GPUs", 2, 16),
    ("4台8卡 A100 全参微调 Qwen2.5-72B", 4, 32),
])
def test_machines_times_gpus_is_read_as_nodes_and_gpus(question: str, nodes: int, gpus: int) -> None:
    fields = parse_question(question).workload_fields
    assert (fields.get("num_nodes"), fields.get("num_gpus")) == (nodes, gpus)
    assert "batch_size_per_gpu" not in fields and "input_size" not in fields


def test_a_resolution_or_a_per_gpu_batch_is_not_read_as_machines_times_gpus() -> None:
    f = parse_question("Train a YOLOv8 detector at 640x640 on 8 GPUs").workload_fields
    assert f.get("num_nodes") is None and f.get("num_gpus") == 8
    f = parse_question("Mask R-CNN, 8 GPUs x 2 images").workload_fields
    assert f.get("num_nodes") is None and (f.get("num_gpus"), f.get("batch_size_per_gpu")) == (8, 2)
