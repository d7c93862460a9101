"""Bilingual 'how it was computed' text with the numbers interpolated."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpu_advisor.util.i18n import Text
from gpu_advisor.memory.settings import Resolved

if TYPE_CHECKING:
    from gpu_advisor.memory.cv import CvParts
    from gpu_advisor.memory.transformer import TextParts

GIB = 2.0**30


def _g(x: float) -> str:
    return f"{x / GIB:.2f} GiB"


def _states(parts: dict[str, float], params: float, trainable: float, s: dict) -> tuple[str, str]:
    quantized = s.get("quantization") not in (None, "none")
    at = f"{s['quantization']} (quantized weights)" if quantized else s["precision"]
    at_zh = f"{s['quantization']}（量化权重）" if quantized else s["precision"]
    en = (f"weights {_g(parts['weights'])} = {params / 1e6:,.1f} M params at {at}; "
          f"gradients {_g(parts.get('gradients', 0))} for {trainable / 1e6:,.1f} M trainable params; "
          f"optimizer {_g(parts['optimizer'])} ({s.get('optimizer')}); master {_g(parts['master_weights'])}; "
          f"framework extras {_g(parts['framework_extras'])} (DDP buckets / gathered shards, {s['distributed']} on {s['num_gpus']} GPU)")
    zh = (f"权重 {_g(parts['weights'])} = {params / 1e6:,.1f} M 参数 × {at_zh}；"
          f"梯度 {_g(parts.get('gradients', 0))}（可训练参数 {trainable / 1e6:,.1f} M）；"
          f"优化器状态 {_g(parts['optimizer'])}（{s.get('optimizer')}）；主权重 {_g(parts['master_weights'])}；"
          f"框架额外 {_g(parts['framework_extras'])}（DDP 桶 / 分片收集，{s['distributed']}，{s['num_gpus']} 卡）")
    return en, zh


def cv_formula(r: Resolved, p: CvParts, parts: dict[str, float]) -> Text:
    s = r.settings
    b, (h, w) = s["batch_size_per_gpu"], s["input_size"]
    se, sz = _states(parts, p.params, p.states.gradients and p.params, s)
    en = (f"{se}. Activations {_g(parts['activations'])} = {b} × {h}×{w} px × ({p.values_per_pixel:.0f} saved values/px "
          f"× 4 B × calibration {p.calib:.2f} + {p.attn_per_pixel:.0f} attention probabilities/px + loss "
          f"{p.loss_bytes_per_pixel:.0f} B/px) (+ RoI heads {r.method.per_image_mb if r.method else 0:.0f} MiB/image); "
          f"start-of-backward transient {_g(parts['transient'])}. Output stride {r.output_stride}, PyTorch {s['pytorch_version']}.")
    zh = (f"{sz}。激活 {_g(parts['activations'])} = {b} × {h}×{w} 像素 ×（每像素 {p.values_per_pixel:.0f} 个保存值 × 4 B "
          f"× 校准 {p.calib:.2f} + 每像素 {p.attn_per_pixel:.0f} 个注意力概率 + 损失 {p.loss_bytes_per_pixel:.0f} B/像素）"
          f"（+ RoI 头 {r.method.per_image_mb if r.method else 0:.0f} MiB/图）；反向起始瞬时 {_g(parts['transient'])}。"
          f"输出步长 {r.output_stride}，PyTorch {s['pytorch_version']}。")
    return Text(en=en, zh=zh)


def text_formula(r: Resolved, p: TextParts, parts: dict[str, float]) -> Text:
    s, t = r.settings, r.transformer
    assert t is not None
    se, sz = _states(parts, p.params, p.trainable, s)
    shape = f"{t.layers} layers, hidden {t.hidden}, {t.heads} heads / {t.kv_heads} KV heads, intermediate {t.intermediate}, vocab {t.vocab}"
    if t.experts:
        shape += (f"; MoE on {t.moe_layers} layers: {t.experts} experts of width {t.moe_intermediate}, top-{t.experts_per_tok}"
                  + (f", shared {t.shared_intermediate}" if t.shared_intermediate else "")
                  + f" (weights, gradients and optimizer count every expert; activations the routed top-{t.experts_per_tok};"
                  f" {t.active_params_billion:g} B active parameters per token)")
    if t.kv_lora_rank:
        shape += f"; MLA KV cache {t.kv_lora_rank} + {t.qk_rope_head_dim} values per token per layer"
    if t.sliding_window and t.sliding_layers:
        shape += f"; sliding window {t.sliding_window} tokens on {t.sliding_layers} of {t.layers} layers (KV bounded there)"
    if t.cross_attention_layers:
        shape += (f"; {t.cross_attention_layers} of {t.layers} layers cross-attend to the image (no KV per text "
                  "token there)")
    ckpt = "on" if s.get("gradient_checkpointing") else "off"
    en = (f"{se}. Shape: {shape}. Activations {_g(parts['activations'])} for {p.tokens} tokens "
          f"({p.per_token_layer_bytes:.0f} B per token per layer, checkpointing {ckpt}, + logits); "
          f"transient {_g(parts['transient'])}; KV cache {_g(parts.get('kv_cache', 0))}.")
    zh = (f"{sz}。结构：{shape}。激活 {_g(parts['activations'])}，{p.tokens} 个 token"
          f"（每 token 每层 {p.per_token_layer_bytes:.0f} B，激活检查点 {ckpt}，含 logits）；"
          f"瞬时 {_g(parts['transient'])}；KV 缓存 {_g(parts.get('kv_cache', 0))}。")
    return Text(en=en, zh=zh)
