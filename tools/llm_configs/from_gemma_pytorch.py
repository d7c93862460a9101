"""Write the Gemma 3 4B / 12B / 27B config.json files (Hugging Face field names) from google/gemma_pytorch's
gemma/config.py and gemma/siglip_vision/config.py, read as source (ast, no torch import).

No public repository in the offline index holds google/gemma-3-{4b,12b,27b}-it's config.json verbatim (the copies
found are test configs with layers cut); Google's own reference implementation states the architectures as code.
This maps its fields one to one onto transformers' Gemma3Config / Gemma3TextConfig / SiglipVisionConfig names:

  num_hidden_layers, num_attention_heads, num_key_value_heads, hidden_size, intermediate_size, head_dim,
  vocab_size, max_position_embeddings, query_pre_attn_scalar    -> same names (text_config)
  sliding_window_size                                           -> sliding_window
  attn_types (5 x LOCAL_SLIDING then GLOBAL)                    -> sliding_window_pattern 6 (every 6th layer global)
  rope_wave_length {LOCAL_SLIDING, GLOBAL}                      -> rope_local_base_freq, rope_theta
  rope_scaling_factor                                           -> rope_scaling {factor, rope_type: linear}
  vision_config (SiglipVisionModelConfig): num_hidden_layers, embedding_dim -> hidden_size, intermediate_size,
  num_attention_heads, conv2d_patch_size -> patch_size, image_size (preprocessor.DEFAULT_IMAGE_SIZE),
  input_channels -> num_channels, layer_norm_eps; encoding_sequence_length -> mm_tokens_per_image

A field the function leaves at the dataclass default is written only where the default is Gemma 3's
(max_position_embeddings: the 4B function sets none, so the file names none and transformers' Gemma3TextConfig
default applies, as in the Hub's own sparse text_config).

Usage: python tools/llm_configs/from_gemma_pytorch.py <gemma_pytorch checkout or git-show dump dir>
(expects gemma/config.py, gemma/siglip_vision/config.py, gemma/siglip_vision/preprocessor.py under it).
"""

from __future__ import annotations

import ast
import json
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent
VARIANTS = {"get_config_for_4b": "gemma-3-4b.json", "get_config_for_12b": "gemma-3-12b.json",
            "get_config_for_27b_v3": "gemma-3-27b.json"}
SAME = ("num_hidden_layers", "num_attention_heads", "num_key_value_heads", "hidden_size", "intermediate_size",
        "head_dim", "vocab_size", "max_position_embeddings", "query_pre_attn_scalar")


def _value(node: ast.AST):
    if isinstance(node, ast.BinOp):                      # 3840 * 8 // 2, 5376 // 32 (integer literals only)
        ops = {ast.Mult: lambda a, b: a * b, ast.FloorDiv: lambda a, b: a // b, ast.Add: lambda a, b: a + b,
               ast.Sub: lambda a, b: a - b}
        return ops[type(node.op)](_value(node.left), _value(node.right))
    if isinstance(node, ast.Tuple) or isinstance(node, ast.List):
        return [_value(e) for e in node.elts]
    if isinstance(node, ast.Dict):
        return {_value(k): _value(v) for k, v in zip(node.keys, node.values)}
    if isinstance(node, ast.Attribute):                  # AttentionType.GLOBAL
        return node.attr
    if isinstance(node, ast.Call):                       # get_siglip_vision_model_config()
        return "call:" + getattr(node.func, "attr", getattr(node.func, "id", ""))
    return ast.literal_eval(node)


def _kwargs(tree: ast.Module, func: str) -> dict:
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == func:
            ret = next(n for n in ast.walk(node) if isinstance(n, ast.Return))
            return {k.arg: _value(k.value) for k in ret.value.keywords if k.arg != "dtype"}
    raise SystemExit(f"{func} not found")


def _dataclass_defaults(tree: ast.Module, cls: str) -> dict:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == cls:
            out = {}
            for st in node.body:
                if isinstance(st, ast.AnnAssign) and st.value is not None:
                    out[st.target.id] = st.value
                elif isinstance(st, ast.Assign):
                    out[st.targets[0].id] = st.value
            return out
    raise SystemExit(f"{cls} not found")


def main(root: str) -> None:
    base = Path(root)
    cfg = ast.parse((base / "gemma" / "config.py").read_text())
    vis = _dataclass_defaults(ast.parse((base / "gemma" / "siglip_vision" / "config.py").read_text()),
                              "SiglipVisionModelConfig")
    pre = ast.parse((base / "gemma" / "siglip_vision" / "preprocessor.py").read_text())
    image_size = next(ast.literal_eval(n.value) for n in pre.body if isinstance(n, ast.Assign)
                      and getattr(n.targets[0], "id", "") == "DEFAULT_IMAGE_SIZE")
    vision = {"hidden_size": _value(vis["embedding_dim"]), "image_size": image_size,
              "intermediate_size": _value(vis["intermediate_size"]), "layer_norm_eps": _value(vis["layer_norm_eps"]),
              "model_type": "siglip_vision_model", "num_attention_heads": _value(vis["num_attention_heads"]),
              "num_channels": _value(vis["input_channels"]), "num_hidden_layers": _value(vis["num_hidden_layers"]),
              "patch_size": _value(vis["conv2d_patch_size"])}
    for func, name in VARIANTS.items():
        kw = _kwargs(cfg, func)
        assert kw["architecture"] == "GEMMA_3" and kw["vision_config"] == "call:get_siglip_vision_model_config"
        types = kw["attn_types"]
        assert types[:-1] == ["LOCAL_SLIDING"] * (len(types) - 1) and types[-1] == "GLOBAL"
        text = {k: kw[k] for k in SAME if k in kw}
        text.update(model_type="gemma3_text", sliding_window=kw["sliding_window_size"],
                    sliding_window_pattern=len(types), rope_theta=kw["rope_wave_length"]["GLOBAL"],
                    rope_local_base_freq=kw["rope_wave_length"]["LOCAL_SLIDING"],
                    rope_scaling={"factor": float(kw["rope_scaling_factor"]), "rope_type": "linear"})
        out = {"architectures": ["Gemma3ForConditionalGeneration"], "mm_tokens_per_image":
               _value(vis["encoding_sequence_length"]), "model_type": "gemma3",
               "text_config": dict(sorted(text.items())), "torch_dtype": "bfloat16", "vision_config": vision}
        (OUT / name).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
        print("wrote", OUT / name)


if __name__ == "__main__":
    main(sys.argv[1])
