"""Every number the time and cost estimate uses that is not computed: each with its source, or an assumption.

Utilisation is the share of the dense peak spent on executed FLOPs. Because recomputation from activation
checkpointing is counted in the compute (x 4/3, ladder.TIME_FACTOR), this is hardware FLOPs utilisation (HFU);
PaLM defines MFU (without recomputation) and HFU (with it) in Chowdhery et al. 2022, arXiv:2204.02311, sec. 4.1
and Appendix B.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpu_advisor.util.i18n import Text

SRC_PALM = "Chowdhery et al. 2022, PaLM, arXiv:2204.02311, Table 3 (MFU: GPT-3 21.3 %, Gopher 32.5 %, MT-NLG 30.2 %, PaLM 46.2 %)"
SRC_KORTHIKANTI = ("Korthikanti et al. 2022, Reducing Activation Recomputation in Large Transformer Models, "
                   "arXiv:2205.05198 (530B on 2240 A100: MFU 54.2 % with selective recomputation, 42.1 % with full)")
SRC_MEGATRON = "NVIDIA Megatron-LM README, MFU/HFU table (1T parameters: MFU 56.3 %), https://github.com/NVIDIA/Megatron-LM"
SRC_TORCHTUNE = ("pytorch/torchtune README 'Memory and training speed' and Llama 3.2 3B optimisation table "
                 "(as recorded in shared/benchmarks/memory/llm_finetune_dev.csv)")
SRC_LORA = ("Hu et al. 2021, LoRA, arXiv:2106.09685: frozen weights need no weight gradients, so the backward pass "
            "of the base model does input-gradient GEMMs only (2N of the 4N per token) -> 4N instead of 6N")
SRC_GOYAL = "Goyal et al. 2017, Accurate, Large Minibatch SGD, arXiv:1706.02677 (~90 % scaling efficiency 8 -> 256 GPUs)"
SRC_HOROVOD = "Sergeev & Del Balso 2018, Horovod, arXiv:1802.05799 (88 % scaling efficiency, 128 GPUs, RDMA)"
SRC_TF32 = ("PyTorch docs, CUDA semantics, 'TensorFloat-32 (TF32) on Ampere (and later) devices': cuDNN convolutions "
            "use TF32 by default, matmuls do not (torch.backends.cuda.matmul.allow_tf32=False since 1.12)")
SRC_TF32_MEASURED = ("NVIDIA/DeepLearningExamples resnet50v1.5 README @5843f4e5: 938 img/s TF32 on one A100 "
                     "= 23 TFLOPS at 24.6 GFLOP per training image, above the 19.5 TFLOPS FP32 peak")


# A band (low-high share, why, sources). Its instances are named constants: identity is their equality, and a cheap key
# for the notes cached on them. The kinds below are one shape under three names, so that a signature says which it takes.
@dataclass(frozen=True, eq=False)
class Band:
    low: float
    high: float
    why: Text
    sources: tuple[str, ...] = ()


class Utilisation(Band):
    """Share of the dense peak spent on executed FLOPs."""


class Scaling(Band):
    """Multi-GPU scaling efficiency."""


class LinkEfficiency(Band):
    """Share of a link's rate a ring collective reaches."""


SRC_LLMFOUNDRY = ("mosaicml/llm-foundry@8c8dd48f scripts/train/benchmarking/README.md, 'A100 80GB with 1600 Gbps "
                  "node-node interconnect' table (recorded in bench/data/llmfoundry_a100_mfu.csv, checked by "
                  "tests/test_utilisation_band.py): MPT 1B-70B at 512-65536 tokens, 36-78 % on this estimate's FLOP count")
_LLM = Utilisation(0.30, 0.75, Text(
    en="share of dense peak spent on executed FLOPs (6 x parameters x tokens plus causal attention, recomputation "
       "included, i.e. hardware FLOPs utilisation): MosaicML's published A100 runs of 1B-70B models at 512-65k tokens "
       "reach 36-78 % on that count (90 % of them at most 74 %), tuned large-scale training 57-58 % (PaLM, "
       "Megatron-LM); untuned stacks reach less, so 30-75 % is assumed",
    zh="实际执行 FLOPs（6 × 参数 × token 加因果注意力，含重计算，即硬件 FLOPs 利用率）占稠密峰值的比例：MosaicML 公布的 "
       "A100 上 1B–70B 模型、512–65k token 的训练按此口径为 36–78 %（九成不超过 74 %），调优良好的大规模训练 57–58 %"
       "（PaLM、Megatron-LM）；未调优的框架更低，此处假设 30–75 %"),
    (SRC_LLMFOUNDRY, SRC_PALM, SRC_KORTHIKANTI, SRC_MEGATRON))
# QLoRA: the 4-bit base weights are dequantized to 16 bits before each matmul that uses them (forward, the backward's
# input gradient, and the recomputed forward under checkpointing), and the matmul itself runs in 16 bits. The
# dequantization is memory traffic proportional to the parameters, not to the tokens: it is counted apart
# (timing.dequant_seconds), so the matmuls keep the 16-bit band.
SRC_DEQUANT = ("bitsandbytes MatMul4Bit @61a4a20d-5453368b forward: linear(A, dequantize_4bit(B).to(A.dtype)), "
               "backward: matmul(grad_output, dequantize_4bit(B)) (the backward still at 95f9af30); torchtune LoRALinear "
               "uses torchao linear_nf4 (F.linear(input, weight.to(input.dtype))) @bd2a0fc7 torchtune/modules/peft/lora.py")
DEQUANT_BYTES_PER_PARAM = 0.5 + 0.127 / 8 + 2.0   # read NF4 + double-quantised constants, write the 16-bit copy
_QLORA = Utilisation(_LLM.low, _LLM.high, Text(
    en="4-bit base weights are dequantized to 16 bits before each matmul, which then runs as in bf16: the 16-bit band "
       "(30-75 %), with the dequantization's memory traffic counted apart",
    zh="4 bit 基座权重在每次矩阵乘法前反量化为 16 位，矩阵乘法本身与 BF16 相同：沿用 16 位的利用率区间（30–75 %），"
       "反量化的显存读写另行计入"), (SRC_LLMFOUNDRY, SRC_DEQUANT))
_ENCODER = Utilisation(0.20, 0.45, Text(
    en="assumption: BERT-class encoders at short sequences keep Tensor Cores less busy than large decoders (20-45 %)",
    zh="假设：短序列的 BERT 类编码器对 Tensor Core 的利用低于大型解码器，取 20–45 %"), (SRC_PALM,))
_VISION_TRANSFORMER = Utilisation(0.15, 0.35, Text(
    en="assumption: vision transformers with dense heads at high resolution (15-35 %)",
    zh="假设：高分辨率、带密集预测头的视觉 Transformer，取 15–35 %"))
SRC_DLE_CONVNETS = ("NVIDIA/DeepLearningExamples PyTorch/Classification/ConvNets resnet50v1.5 and resnext101-32x4d "
                    "README.md 'Training performance results' @5843f4e5 (recorded in "
                    "bench/data/dle_vision_train_throughput.csv, checked by bench/vision_time_accuracy.py)")
_CNN = Utilisation(0.10, 0.30, Text(
    en="share of the Tensor-Core peak: NVIDIA's published ResNet-50 / ResNeXt-101 training rates on one A100 / V100 "
       "imply 14-24 % (TF32 14-15 %, mixed precision 19-24 %, tuned: DALI, channels-last); data augmentation, "
       "normalisation layers and small kernels keep convolutions below large matmuls, untuned input pipelines lower "
       "still, so 10-30 % is assumed",
    zh="Tensor Core 峰值的利用比例：NVIDIA 公布的 ResNet-50 / ResNeXt-101 单卡 A100 / V100 训练速度约合 14–24 %"
       "（TF32 14–15 %，混合精度 19–24 %，已调优：DALI、channels-last）；数据增强、归一化层和小卷积核使卷积低于大矩阵乘法，"
       "未调优的数据流水线更低，故取 10–30 %"), (SRC_DLE_CONVNETS,))
SRC_DLE_MASKRCNN = ("NVIDIA/DeepLearningExamples PyTorch/Segmentation/MaskRCNN/README.md 'Training performance "
                    "results' @9a36fc31 (R-50-FPN, 12 images per GPU; recorded in bench/data/dle_vision_train_throughput.csv)")
_DETECTION = Utilisation(0.06, 0.30, Text(
    en="share of the Tensor-Core peak: NVIDIA's published Mask R-CNN (R-50-FPN) training rates imply 7-16 % (mixed "
       "precision on A100 7-8 %: proposal, RoI and NMS work gains nothing from Tensor Cores, so AMP is only 1.04x "
       "TF32); single-stage detectors are closer to classification networks (14-24 % for ResNet-50 / ResNeXt-101), so "
       "6-30 % is assumed",
    zh="Tensor Core 峰值的利用比例：NVIDIA 公布的 Mask R-CNN（R-50-FPN）训练速度约合 7–16 %（A100 混合精度 7–8 %："
       "候选框、RoI 与 NMS 计算不受益于 Tensor Core，AMP 仅比 TF32 快 1.04 倍）；单阶段检测器更接近分类网络"
       "（ResNet-50 / ResNeXt-101 为 14–24 %），故取 6–30 %"), (SRC_DLE_MASKRCNN, SRC_DLE_CONVNETS))
_CNN_FP32 = Utilisation(0.35, 0.60, Text(
    en="share of the FP32 (CUDA-core, no Tensor Core) peak: NVIDIA's published FP32 ResNet-50 / ResNeXt-101 training "
       "rates on one V100 imply 44-58 % (cuDNN FP32 convolutions keep the FP32 units busy); untuned stacks reach "
       "less, so 35-60 % is assumed",
    zh="FP32（CUDA core，无 Tensor Core）峰值的利用比例：NVIDIA 公布的 V100 单卡 FP32 ResNet-50 / ResNeXt-101 训练速度"
       "约合 44–58 %（cuDNN 的 FP32 卷积能让 FP32 单元保持忙碌）；未调优的框架更低，故取 35–60 %"), (SRC_DLE_CONVNETS,))

UTILISATION: dict[str, Utilisation] = {
    "llm": _LLM, "llm_qlora": _QLORA, "encoder_nlp": _ENCODER, "transformer_segmentation": _VISION_TRANSFORMER,
    "cnn_segmentation": _CNN, "detection": _DETECTION, "classification": _CNN, "prototype": _CNN,
}
DEFAULT_UTILISATION = _CNN
# fp32 convolutions on a GPU without TF32 (V100, T4, P100): the peak is the FP32 CUDA-core rate, not a Tensor-Core one.
UTILISATION_FP32_CONV = _CNN_FP32


SCALING_ONE_GPU = Scaling(1.0, 1.0, Text(en="one GPU: no scaling loss", zh="单卡：无扩展损失"))
SRC_DLE_SCALING = ("NVIDIA/DeepLearningExamples ConvNets READMEs @5843f4e5 (bench/data/dle_vision_train_throughput.csv): "
                   "8 vs 1 GPU on DGX A100 / DGX-1 (NVLink), ResNet-50 / ResNeXt-101 / SE-ResNeXt-101: 0.82-0.87 "
                   "with AMP, 0.95-0.97 in TF32 / FP32")
SCALING_NVLINK = Scaling(0.82, 0.97, Text(
    en="GPUs of one instance over NVLink: 82-97 % scaling efficiency (NVIDIA's 8-GPU DGX figures for ResNet-50 / "
       "ResNeXt-101: 82-87 % with AMP, 95-97 % in TF32 / FP32)",
    zh="同一实例内经 NVLink 互联：扩展效率 82–97 %（NVIDIA DGX 8 卡实测 ResNet-50 / ResNeXt-101：AMP 82–87 %，"
       "TF32 / FP32 95–97 %）"), (SRC_DLE_SCALING, SRC_GOYAL))
SCALING_PCIE = Scaling(0.80, 0.90, Text(
    en="GPUs of one instance over PCIe (no NVLink): 80-90 % scaling efficiency (assumption)",
    zh="同一实例内经 PCIe 互联（无 NVLink）：扩展效率 80–90 %（假设）"))
SCALING_RDMA = Scaling(0.80, 0.90, Text(
    en="several instances over RDMA: 80-90 % scaling efficiency (88-90 % reported by Horovod and Goyal et al.)",
    zh="多台实例经 RDMA 互联：扩展效率 80–90 %（Horovod 与 Goyal 等报告 88–90 %）"), (SRC_GOYAL, SRC_HOROVOD))
SCALING_TCP = Scaling(0.50, 0.70, Text(
    en="several instances without RDMA (TCP): 50-70 % scaling efficiency (assumption)",
    zh="多台实例无 RDMA（TCP）：扩展效率 50–70 %（假设）"))

# ZeRO-3 / FSDP parameter traffic (costing/comm.py). Per micro-step every GPU all-gathers the 16-bit parameters for
# the forward and again for the backward, and reduce-scatters the gradients of the trainable parameters: a ring moves
# (n-1)/n of each tensor through every GPU's link (Rajbhandari et al. 2019, ZeRO, arXiv:1910.02054, sec. 7.2.2: "ZeRO-3
# ... 3 Psi" against 2 Psi for data parallelism; PyTorch FSDP docs: all-gather before forward and backward,
# reduce-scatter after backward).
SRC_ZERO_COMM = ("Rajbhandari et al. 2019, ZeRO, arXiv:1910.02054, sec. 7.2.2 (ZeRO-3: parameter all-gather in forward "
                 "and backward + gradient reduce-scatter, 3 Psi per step vs 2 Psi for data parallelism)")
SRC_DS_STAGE2 = ("microsoft/DeepSpeed@38327e07 deepspeed/runtime/engine.py allreduce_gradients: 'ZeRO stage >= 2 "
                 "communicates during non gradient accumulation boundaries as well', stage 1 only at the boundary; "
                 "Rajbhandari et al. 2019, ZeRO, arXiv:1910.02054, sec. 7.2.1 (P_os+g: reduce-scatter + all-gather, "
                 "2 Psi, the volume of data parallelism)")
SRC_PCIE = ("PCI-SIG PCIe Base Specification 3.0 / 4.0 / 5.0: 8 / 16 / 32 GT/s per lane, 128b/130b encoding, so x16 "
            "carries 15.75 / 31.5 / 63 GB/s per direction (NVIDIA datasheets state 32 / 64 / 128 GB/s bidirectional)")
SRC_NCCL_PCIE = ("NVIDIA/nccl issue #1639 (2025-03-14): 8 x PCIe Gen5 GPUs reach 28 GB/s all-reduce bus bandwidth "
                 "(44 % of 63 GB/s); NCCL maintainer: 'On PCI systems, the performance you get is usually determined by "
                 "the bandwidth your CPU and memory can deliver'")
# PCIe generation by GPU architecture (x16 host interface in every NVIDIA datasheet the catalog cites:
# P100/V100/T4 Gen3, A10/A30/A100/L20/Ada Gen4, H100/H20/Blackwell Gen5); GB/s per direction.
PCIE_GB_S_BY_ARCH = {"Pascal": 15.75, "Volta": 15.75, "Turing": 15.75, "Ampere": 31.5, "Ada Lovelace": 31.5,
                     "Hopper": 63.0, "Blackwell": 63.0}


LINK_PCIE = LinkEfficiency(0.40, 0.75, Text(
    en="share of the PCIe x16 per-direction rate that a ring collective reaches between GPUs without NVLink: 40-75 % "
       "(assumption; 8 x Gen5 GPUs measured 44 %, limited by the CPU root complex and memory)",
    zh="无 NVLink 时环形集合通信在 GPU 间能达到的 PCIe x16 单向速率比例：40–75 %（假设；8 卡 Gen5 实测 44 %，受 CPU 根复合体与内存带宽限制）"),
    (SRC_PCIE, SRC_NCCL_PCIE))
LINK_NVLINK = LinkEfficiency(0.60, 0.85, Text(
    en="share of the NVLink per-direction bandwidth (half the datasheet's total) a ring collective reaches: 60-85 % "
       "(assumption)",
    zh="环形集合通信能达到的 NVLink 单向带宽（数据手册总带宽的一半）比例：60–85 %（假设）"))
# NVLink of unstated bandwidth: the lowest NVLink figure the catalog states for a GPU of the same architecture
# (gpus.yaml: Ampere A30 200 GB/s, NVIDIA A30 datasheet; Volta V100 SXM2 300 GB/s), else the PCIe rate.
NVLINK_GB_S_LOW_BY_ARCH = {"Ampere": 200.0, "Volta": 300.0}
LINK_NVLINK_UNSTATED = LinkEfficiency(0.60, float("inf"), Text(
    en="Alibaba states NVLink but no bandwidth: the slow end takes the lowest NVLink figure the catalog states for "
       "this architecture (per direction, at 60 %), the fast end no exposed traffic",
    zh="阿里云只说明有 NVLink、未给带宽：慢端按目录中同架构 GPU 的最低 NVLink 数值（单向，按 60 %）计，快端按通信完全不暴露计"),
    ("NVIDIA A30 / V100 datasheets, as recorded in knowledge/catalog/gpus.yaml",))
LINK_NETWORK = LinkEfficiency(0.70, 0.90, Text(
    en="share of the instance's RDMA (or, without a stated RDMA figure, network) bandwidth a ring collective across "
       "instances reaches: 70-90 % (assumption)",
    zh="跨实例环形集合通信能达到的实例 RDMA（未给出 RDMA 数值时为网络）带宽比例：70–90 %（假设）"))

# Inter-node traffic over plain TCP (NCCL's socket transport, no RDMA): measured all-reduce bus bandwidth against the
# wire rate. costing/internode.py decides from it whether a multi-node job needs RDMA.
SRC_NCCL_TCP = ("NVIDIA/nccl issue #450 (2021-01-05): 4 x 8 V100 over 100 Gbit/s TCP, nccl-tests all_reduce 8-128 MB, "
                "best bus bandwidth 4-6 GB/s (32-48 % of 12.5 GB/s); NVIDIA/nccl issue #209 (2019-04-19): 'not been "
                "able to reliably obtain more than 60% of wire speed over 32Gpbs networks'")
LINK_TCP = LinkEfficiency(0.30, 0.60, Text(
    en="share of the instance's network bandwidth NCCL's socket (TCP) transport reaches in an all-reduce across "
       "instances: 30-60 % (measured 32-48 % on 100 Gbit/s, at most 60 % on 32 Gbit/s)",
    zh="NCCL 套接字（TCP）传输在跨实例 all-reduce 中能达到的实例网络带宽比例：30–60 %（100 Gbit/s 实测 32–48 %，"
       "32 Gbit/s 上最多 60 %）"), (SRC_NCCL_TCP,))

# The network between machines the user owns, when the question states none: 100 Gbit/s Ethernet, the wire rate of the
# TCP measurement LINK_TCP comes from (NCCL issue #450). The owned multi-machine time derives its scaling from the job's
# own traffic over it (costing/timing._tcp_scaling), said as assumed; a slower link makes the time longer.
OWNED_NETWORK_GBIT_S = 100.0

# LoRA / QLoRA: forward 2N + input gradients 2N, no weight gradients for the frozen base (adapters are negligible).
LORA_FLOPS_FACTOR = 4 / 6

# Spot (preemptible) instances: Alibaba states "up to 90 %" savings and "as low as 10 % of pay-as-you-go" and no
# minimum discount (catalog cost_levers preemptible_spot.1-3); that the spot price never exceeds pay-as-you-go is
# an assumption. The catalog ids are cited in the report's notes.
SPOT_FRACTION_LOW = 0.10
SPOT_FRACTION_HIGH = 1.00
SPOT_NOTICE_H = 5 / 60                 # released 5 minutes after the interruption notice (preemptible_spot.5)
SPOT_PROTECTION_H = 1.0                # optional 1-hour protection period (preemptible_spot.6)
CHECKPOINT_INTERVAL_H = 0.5            # assumption: a checkpoint every 30 minutes
RESTART_H = 0.25                       # assumption: 15 minutes to get a new instance, pull data and reload
INTERRUPTIONS_PER_H_HIGH = 0.25        # assumption: at worst one interruption per 4 hours (Alibaba publishes no rate)

# Savings plans: "up to 76 %" off pay-as-you-go is Alibaba's published upper bound (savings_plans.1); GPU-family
# rates are not in the catalog (savings_plans.4). The low end is an assumption, labelled as such in the output.
SAVINGS_DISCOUNT_LOW = 0.30
SAVINGS_DISCOUNT_HIGH = 0.76
SAVINGS_TERM_MONTHS = 12               # 1-year term (1 or 3 years are offered, savings_plans.1)
HOURS_PER_MONTH = 730                  # 8760 h / 12
