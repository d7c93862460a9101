"""The Workload: the one public contract of gpu-advisor.

Every field's description doubles as the CLI's question and the MCP tool's schema text, so write them
for a person who is being asked. Everything optional has a default that the advisor fills and reports
back as an assumption (see ``gpu_advisor.plan.defaults``).
"""

from __future__ import annotations

import math
import re
from enum import Enum
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from gpu_advisor.util.textsafe import is_clean


class Task(str, Enum):
    semantic_segmentation = "semantic_segmentation"
    instance_segmentation = "instance_segmentation"
    panoptic_segmentation = "panoptic_segmentation"
    object_detection = "object_detection"
    image_classification = "image_classification"
    llm_finetune = "llm_finetune"
    llm_pretrain = "llm_pretrain"
    nlp_finetune = "nlp_finetune"
    inference = "inference"
    preprocessing = "preprocessing"


class Stage(str, Enum):
    prototype = "prototype"
    finetune = "finetune"
    pretrain = "pretrain"
    serve = "serve"


class Precision(str, Enum):
    fp32 = "fp32"
    fp16_amp = "fp16_amp"
    bf16_amp = "bf16_amp"
    bf16 = "bf16"
    fp8 = "fp8"


class Optimizer(str, Enum):
    sgd = "sgd"
    sgd_momentum = "sgd_momentum"
    adam = "adam"
    adamw = "adamw"
    adamw_8bit = "adamw_8bit"
    adafactor = "adafactor"
    lion = "lion"


class FinetuneMethod(str, Enum):
    full = "full"
    lora = "lora"
    qlora = "qlora"


class Quantization(str, Enum):
    none = "none"
    int8 = "int8"
    int4 = "int4"
    nf4 = "nf4"
    fp8 = "fp8"
    fp4 = "fp4"


class KvCacheDtype(str, Enum):
    auto = "auto"
    bf16 = "bf16"
    fp16 = "fp16"
    fp8 = "fp8"


class Framework(str, Enum):
    transformers = "transformers"
    litgpt = "litgpt"
    torchtune = "torchtune"
    detectron2 = "detectron2"
    other = "other"


class Distributed(str, Enum):
    none = "none"
    ddp = "ddp"
    fsdp = "fsdp"
    zero1 = "zero1"
    zero2 = "zero2"
    zero3 = "zero3"


class Augmentation(str, Enum):
    light = "light"
    heavy = "heavy"


class Lang(str, Enum):
    zh = "zh"
    en = "en"


REGION_PATTERN = re.compile(r"^(mainland|international|[a-z]{2}-[a-z]+(-[0-9a-z]+)?)$")
PYTORCH_VERSION_PATTERN = re.compile(r"^[12]\.[0-9]{1,2}$")

# Upper bounds are physical sanity limits, not product limits: large enough for any real job, small enough
# that arithmetic on them stays finite and meaningful.
MAX_SIDE_PX = 16384
MAX_SEQ_LEN = 1_048_576
MAX_GPUS = 4096
# Lower bounds of the float fields are physical minimums too: a model of 10^-5 billion parameters (10,000), a
# 1 kB dataset or 20 seconds of use is an input error, not a job (issue 21).
MIN_PARAMS_BILLION = 0.001  # one million parameters: the smallest networks the memory model is meant for
MAX_NODES = 512

# LoRA target modules: canonical names (one block's linear layers + lm_head) and the names PEFT, torchtune,
# litgpt and LLaMA-Factory configs use for them. Group names expand to several layers.
LORA_TARGETS = ("q", "k", "v", "o", "gate", "up", "down", "lm_head")
_LORA_ALIASES: dict[str, tuple[str, ...]] = {
    "q": ("q",), "q_proj": ("q",), "query": ("q",), "wq": ("q",),
    "k": ("k",), "k_proj": ("k",), "key": ("k",), "wk": ("k",),
    "v": ("v",), "v_proj": ("v",), "value": ("v",), "wv": ("v",),
    "o": ("o",), "o_proj": ("o",), "out_proj": ("o",), "output_proj": ("o",), "projection": ("o",), "dense": ("o",),
    "wo": ("o",),
    "gate": ("gate",), "gate_proj": ("gate",), "w1": ("gate",),
    "up": ("up",), "up_proj": ("up",), "w3": ("up",), "fc1": ("up",), "dense_h_to_4h": ("up",),
    "down": ("down",), "down_proj": ("down",), "w2": ("down",), "fc2": ("down",), "dense_4h_to_h": ("down",),
    "qkv": ("q", "k", "v"), "qkv_proj": ("q", "k", "v"), "query_key_value": ("q", "k", "v"), "c_attn": ("q", "k", "v"),
    "attention": ("q", "k", "v", "o"), "attn": ("q", "k", "v", "o"),
    "mlp": ("gate", "up", "down"), "ffn": ("gate", "up", "down"),
    "all": ("q", "k", "v", "o", "gate", "up", "down"), "all-linear": ("q", "k", "v", "o", "gate", "up", "down"),
    "all_linear": ("q", "k", "v", "o", "gate", "up", "down"),
    "lm_head": ("lm_head",), "head": ("lm_head",), "output": ("lm_head",),
}


def lora_target_names(names: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Canonical LoRA targets (in LORA_TARGETS order) for module names; ValueError naming an unknown one."""
    found: set[str] = set()
    for name in names:
        key = name.strip().lower().replace(" ", "")
        if key not in _LORA_ALIASES:
            raise ValueError(f"unknown LoRA target module {name[:40]!r}; use q, k, v, o, gate, up, down, "
                             "lm_head, attention, mlp or all-linear (or q_proj, v_proj, ... as in PEFT)")
        found.update(_LORA_ALIASES[key])
    return tuple(t for t in LORA_TARGETS if t in found)


def _finite(value: float | None, name: str) -> float | None:
    if value is not None and not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number")
    return value


class Workload(BaseModel):
    """A training, fine-tuning, inference or preprocessing job to size on Alibaba Cloud."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True, use_enum_values=False,
                              validate_default=False, frozen=True)

    task: Task = Field(description="What the job does: semantic_segmentation, instance_segmentation, "
                       "panoptic_segmentation, object_detection, image_classification, llm_finetune, "
                       "llm_pretrain, nlp_finetune, inference (serving a trained model) or preprocessing "
                       "(CPU-only data preparation).")
    stage: Stage | None = Field(None, description="Project stage: prototype (quick trials, small data), "
                                "finetune (train from pretrained weights), pretrain (from scratch, large data) "
                                "or serve (online inference). Default: derived from task.")
    model: Annotated[str, Field(min_length=1, max_length=120)] | None = Field(
        None, description="Model or method as you would write it, e.g. 'DeepLabV3+', 'SegFormer-B5', "
        "'Mask R-CNN', 'Llama 3.1 8B', 'BERT-base'. Default: a typical model for the task.")
    backbone: Annotated[str, Field(min_length=1, max_length=120)] | None = Field(
        None, description="Backbone, e.g. 'R-50-D8', 'Swin-L', 'MiT-B5', 'ResNet-101'. Default: the model's usual one.")
    params_billion: Annotated[float, Field(ge=MIN_PARAMS_BILLION, le=2000)] | None = Field(
        None, description="Parameter count in billions, for a model the knowledge base does not know "
        "(e.g. 7 for a 7B LLM, 0.044 for a 44M CNN).")
    input_size: tuple[Annotated[int, Field(ge=16, le=MAX_SIDE_PX)], Annotated[int, Field(ge=16, le=MAX_SIDE_PX)]] | None = Field(
        None, description="Training crop / input image size [height, width] in pixels, e.g. [1024, 1024]. "
        "Default: the model's usual crop.")
    seq_len: Annotated[int, Field(ge=1, le=MAX_SEQ_LEN)] | None = Field(
        None, description="Sequence length in tokens for language models (prompt + output for inference). Default: 2048 for LLMs, 512 for BERT-class.")
    output_tokens: Annotated[int, Field(ge=1, le=MAX_SEQ_LEN)] | None = Field(
        None, description="Serving an LLM: tokens generated per request, part of seq_len (e.g. 500). Sets speed and requests/s. Default: not stated.")
    batch_size_per_gpu: Annotated[int, Field(ge=1, le=4096)] | None = Field(
        None, description="Micro-batch per GPU (images or sequences; concurrent requests for inference). Default: the model's usual one.")
    num_gpus: Annotated[int, Field(ge=1, le=MAX_GPUS)] | None = Field(
        None, description="Number of GPUs you want to use in total (data parallel). Default: the fewest that fit.")
    num_nodes: Annotated[int, Field(ge=1, le=MAX_NODES)] | None = Field(
        None, description="Number of machines (instances) the job runs on, e.g. 2 for 'two machines with 8 GPUs each' "
        "(then num_gpus is 16). Several machines are connected over RDMA. Default: as few as hold the job.")
    concurrent_users: Annotated[int, Field(ge=1, le=10_000_000)] | None = Field(
        None, description="Serving load: users or requests in flight at once. Default: not stated.")
    precision: Precision | None = Field(None, description="Numeric precision: fp32, fp16_amp, bf16_amp, bf16 (pure) or fp8. Default: fp32 for CNN training, bf16 for LLMs.")
    optimizer: Optimizer | None = Field(None, description="Optimizer: sgd, sgd_momentum, adam, adamw, adamw_8bit, adafactor or lion. Default: sgd_momentum for CNNs, adamw for transformers.")
    gradient_checkpointing: bool | None = Field(None, description="Activation (gradient) checkpointing on? Default: off for CV, on for LLM fine-tuning.")
    finetune_method: FinetuneMethod | None = Field(None, description="full, lora or qlora (LLM / NLP fine-tuning). Default: full.")
    lora_rank: Annotated[int, Field(ge=1, le=4096)] | None = Field(None, description="LoRA rank r. Default: 16.")
    lora_targets: Annotated[tuple[Annotated[str, Field(min_length=1, max_length=40)], ...], Field(min_length=1, max_length=16)] | None = Field(
        None, description="Layers LoRA adapts, e.g. ['q_proj', 'v_proj'] or ['all-linear']: q, k, v, o, gate, up, down, "
        "lm_head, attention, mlp. Frozen layers without an adapter keep no input for backward, so fewer targets "
        "need less memory. Default: every linear layer of the blocks.")
    chunked_loss: bool | None = Field(None, description="Is the LLM's cross-entropy computed chunk by chunk "
                                      "(torchtune CEWithChunkedOutputLoss, Liger / Unsloth fused cross-entropy)? "
                                      "Default: no (the whole logits tensor is upcast to fp32 at once).")
    activation_offloading: bool | None = Field(None, description="Are the activations saved for backward moved to "
                                               "CPU memory during the forward (torchtune enable_activation_offloading, "
                                               "Unsloth use_gradient_checkpointing='unsloth')? Only the layer being "
                                               "computed keeps its tensors on the GPU. Default: no.")
    cpu_offload: bool | None = Field(None, description="Are the model states kept in CPU memory (torchtune "
                                     "fsdp_cpu_offload / FSDP CPUOffload(offload_params=True), DeepSpeed offload_param "
                                     "+ offload_optimizer)? The optimizer state (and fp32 master) then lives on the CPU; "
                                     "with fsdp or zero3 the weight and gradient shards too, and the GPU holds the "
                                     "layers being gathered. Default: no.")
    framework: Framework | None = Field(None, description="Training code. LLM fine-tune: transformers (HF "
                                        "Trainer, PEFT, TRL, LLaMA-Factory), litgpt, torchtune or other. It changes "
                                        "what QLoRA keeps: bitsandbytes 4-bit layers keep their inputs, torchtune's "
                                        "NF4 layers do not, and litgpt also quantizes lm_head and keeps the previous "
                                        "step's graph through the next forward. For CV detection / segmentation: "
                                        "detectron2 (its ResNet / ResNeXt backbones use FrozenBatchNorm2d, which "
                                        "keeps no input for backward). Default: transformers for LLMs, MMDetection / "
                                        "MMSegmentation behaviour for CV.")
    quantization: Quantization | None = Field(None, description="Weight quantization: none, int8, int4 (AWQ / GPTQ), nf4 (QLoRA), fp8 or fp4 (MXFP4 / NVFP4). Default: none (nf4 with qlora; serving: the published checkpoint's format, e.g. fp8 for DeepSeek-V3).")
    kv_cache_dtype: KvCacheDtype | None = Field(None, description="Serving: KV-cache storage (vLLM --kv-cache-dtype): auto (the model's 16-bit dtype), bf16, fp16 or fp8 (half the bytes). Default: auto.")
    distributed: Distributed | None = Field(None, description="Distributed strategy: none, ddp, fsdp, zero1, zero2 or zero3. Default: ddp when num_gpus > 1.")
    expert_parallel: Annotated[int, Field(ge=1, le=MAX_GPUS)] | None = Field(None, description="Mixture-of-experts models: GPUs the routed experts are split over (expert parallelism, e.g. Megatron / DeepSpeed-MoE --expert-model-parallel-size, vLLM --enable-expert-parallel); each GPU holds 1/expert_parallel of the experts. At most num_gpus. Default: 1 (every GPU holds every expert).")
    pytorch_version: Annotated[str, Field(max_length=8)] | None = Field(None, description="PyTorch major.minor, e.g. '1.8' or '2.4'. Memory differs between 1.x and 2.x. Default: 2.4.")
    num_classes: Annotated[int, Field(ge=1, le=100_000)] | None = Field(None, description="Number of classes (segmentation / detection / classification). Default: the dataset's usual one (19 Cityscapes, 150 ADE20K, 80 COCO, 1000 ImageNet).")
    num_samples: Annotated[int, Field(ge=1, le=10_000_000_000)] | None = Field(None, description="Training samples (images, or sequences of seq_len tokens for language models). Default: from dataset_size_gb when given (the task's reference dataset's bytes per image, or about 4 bytes of text per token), else the task's reference dataset; both stated as assumptions.")
    dataset_size_gb: Annotated[float, Field(ge=0.001, le=10_000_000)] | None = Field(None, description="Dataset size on disk in GB: sizes storage, and gives the sample count when num_samples is not given. Default: unknown.")
    epochs: Annotated[float, Field(ge=0.001, le=100_000)] | None = Field(None, description="Passes over the data. Default: depends on the task.")
    training_tokens_billion: Annotated[float, Field(ge=0.001, le=1_000_000)] | None = Field(
        None, description="Tokens to train on in total, in billions, for language models (e.g. 100 for '100B tokens'): "
        "sets the job size as tokens / seq_len sequences, one pass. Default: from num_samples and epochs.")
    data_loader_workers: Annotated[int, Field(ge=0, le=256)] | None = Field(None, description="DataLoader worker processes per GPU. Default: 4 (8 with heavy augmentation).")
    augmentation: Augmentation | None = Field(None, description="Data augmentation cost: light (flip, crop) or heavy (photometric, mosaic, multi-scale). Default: light.")
    gpu_preference: Annotated[str, Field(min_length=1, max_length=40)] | None = Field(
        None, description="A GPU you would like to use, e.g. 'A10', 'L20', 'V100 32GB', 'T4': the advisor checks "
        "whether it holds the job, with which mitigations, and says so. Default: none (the advisor chooses).")
    region: Annotated[str, Field(max_length=32)] | None = Field(None, description="Where to run: 'mainland' (Chinese mainland), 'international', or a region id like 'cn-hangzhou', 'ap-southeast-1'. Default: cn-hangzhou.")
    budget_per_hour: Annotated[float, Field(ge=0.01, le=1_000_000)] | None = Field(None, description="Highest acceptable pay-as-you-go price per hour, in CNY. Default: no cap.")
    budget_total: Annotated[float, Field(ge=0.01, le=1_000_000_000)] | None = Field(None, description="Highest acceptable total cost of the job, in CNY. Default: no cap.")
    deadline_hours: Annotated[float, Field(ge=0.01, le=100_000)] | None = Field(None, description="Wall-clock hours by which the job must finish: the plan adds GPUs (then machines) until the estimated time fits. Default: none.")
    requests_per_second: Annotated[float, Field(ge=0.001, le=10_000_000)] | None = Field(
        None, description="Serving load the service must sustain, in requests (images, or sequences of seq_len tokens) "
        "per second, e.g. 2000: sizes the number of replicas. Default: not sized (one replica).")
    interruptible: bool | None = Field(None, description="Can the job checkpoint and restart after an interruption (needed for spot instances)? Default: no.")
    expected_months_of_use: Annotated[float, Field(ge=0.01, le=120)] | None = Field(None, description="How many months you expect to keep using this capacity (for savings plans / subscription). Default: under 1.")
    lang: Lang = Field(Lang.zh, description="Answer language: zh (Chinese) or en (English).")

    @field_validator("region")
    @classmethod
    def _region_form(cls, value: str | None) -> str | None:
        if value is None:
            return value
        value = value.lower()
        if not REGION_PATTERN.match(value):
            raise ValueError("region must be 'mainland', 'international' or a region id such as 'cn-hangzhou'")
        return value

    @field_validator("pytorch_version")
    @classmethod
    def _torch_form(cls, value: str | None) -> str | None:
        if value is not None and not PYTORCH_VERSION_PATTERN.match(value):
            raise ValueError("pytorch_version must look like '1.8' or '2.4'")
        return value

    @field_validator("params_billion", "dataset_size_gb", "epochs", "budget_per_hour", "budget_total",
                     "deadline_hours", "expected_months_of_use", "training_tokens_billion", "requests_per_second")
    @classmethod
    def _no_nan(cls, value: float | None, info: Any) -> float | None:
        return _finite(value, info.field_name)

    @field_validator("params_billion", "seq_len", "output_tokens", "batch_size_per_gpu", "num_gpus", "lora_rank", "num_classes",
                     "num_samples", "dataset_size_gb", "epochs", "data_loader_workers", "budget_per_hour", "budget_total",
                     "deadline_hours", "expected_months_of_use", "input_size", mode="before")
    @classmethod
    def _not_bool(cls, value: Any) -> Any:
        """true / false is not a number (pydantic would read true as 1): a YAML or JSON slip, refused."""
        if isinstance(value, bool) or (isinstance(value, (list, tuple)) and any(isinstance(v, bool) for v in value)):
            raise ValueError("must be a number, not true/false")
        return value

    @field_validator("lora_targets")
    @classmethod
    def _lora_targets(cls, value: tuple[str, ...] | None) -> tuple[str, ...] | None:
        return None if value is None else lora_target_names(value)

    @field_validator("model", "backbone", "gpu_preference")
    @classmethod
    def _printable(cls, value: str | None) -> str | None:
        if value is not None and not is_clean(value, newlines=False):  # C0/C1, bidi, zero-width (textsafe)
            raise ValueError("must not contain control characters")
        return value

    @model_validator(mode="after")
    def _consistent(self) -> "Workload":
        if self.lora_rank is not None and self.finetune_method == FinetuneMethod.full:
            raise ValueError("lora_rank is set but finetune_method is 'full'; use lora or qlora, or drop lora_rank")
        if self.expert_parallel is not None and self.num_gpus is not None and self.expert_parallel > self.num_gpus:
            raise ValueError(f"expert_parallel ({self.expert_parallel}) must not exceed num_gpus ({self.num_gpus})")
        if self.lora_targets is not None and self.finetune_method == FinetuneMethod.full:
            raise ValueError("lora_targets is set but finetune_method is 'full'; use lora or qlora, or drop lora_targets")
        if self.output_tokens is not None and self.seq_len is not None and self.output_tokens >= self.seq_len:
            raise ValueError(f"output_tokens ({self.output_tokens}) must be less than seq_len ({self.seq_len}), which is "
                             "the prompt plus the output")
        if self.num_nodes is not None and self.num_gpus is not None and self.num_gpus % self.num_nodes:
            raise ValueError(f"num_gpus ({self.num_gpus}) is not a multiple of num_nodes ({self.num_nodes}); give the "
                             "total number of GPUs, e.g. num_nodes 2 and num_gpus 16 for two machines of 8 GPUs")
        return self


WORKLOAD_FIELDS: tuple[str, ...] = tuple(Workload.model_fields)


def enum_value(value: Any, default: str) -> str:
    """A Workload field's value as a string (an enum's value), or ``default`` when it is not set."""
    if value is None:
        return default
    # an Enum member's _value_ is what its ``value`` property returns, read without the property's Python-level call
    return str(value._value_ if isinstance(value, Enum) else getattr(value, "value", value))
