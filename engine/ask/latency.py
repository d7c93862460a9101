"""A stated time-to-first-token target ("首字延迟 < 1 秒", "TTFT under 500 ms") compared with the plan's estimate, and the
estimate said when a first-token latency is asked without a target or a load.

The estimate is the serving plan's (plan/serving.py, answer.choices['serving_speed']): a prompt's prefill from its FLOPs
(2 x active params x prompt tokens) at the GPU's dense peak times costing/decode.PREFILL_UTIL, plus the queue behind
other prefills when an output length gives the closed loop; with no load stated, one prompt alone."""

from __future__ import annotations

import re
from typing import Any

from gpu_advisor.ask.parsed import ParsedQuestion
from gpu_advisor.util.i18n import Text

# first-token words only (not TPOT / end-to-end latency): the words of the parser's latency target (ask/numeric.py)
_FIRST = r"(?:首\s*token|首\s*字|首\s*词|ttft|time[\s-]*to[\s-]*first[\s-]*token|first[\s-]*token(?:\s*latency)?)"
TARGET = re.compile(_FIRST + r"\s*(?:延迟|时延|时间|latency)?\s*(?:要|需要|必须|希望)?\s*(?:低于|小于|不超过|控制在|在|<=?|≤|under|below|"
                    r"within|of|less than|at most|<)?\s*(?P<num>\d{1,6}(?:\.\d{1,3})?)\s*(?P<unit>ms|毫秒|s\b|秒|sec\w*)",
                    re.IGNORECASE)
ASKED = re.compile(_FIRST + r"|(?:响应|回复|出字)(?:速度|延迟|时间)|latency|延迟", re.IGNORECASE)


# a stated per-user output speed ("每个用户 30 token/s", "30 tokens/s per user")
USER_SPEED = re.compile(r"(?:每个?用户|每人|每路|单用户|每条(?:序列|请求)?)\s*(?:要|需要|至少|不低于|达到|的速度)?\s*(?P<zh>\d{1,4}(?:\.\d{1,2})?)\s*"
                        r"(?:个)?\s*(?:输出\s*)?tokens?\s*(?:/\s*(?:s|秒)|每秒)"
                        r"|(?P<en>\d{1,4}(?:\.\d{1,2})?)\s*(?:output\s+)?tokens?\s*(?:/\s*s(?:ec)?\b|per\s+second)\s*"
                        r"(?:per|for each|each|a|for every)\s+(?:user|stream|request|sequence)", re.IGNORECASE)


def user_speed_target(text: str) -> float | None:
    """Output tokens/s a user should see, as stated; None without one."""
    m = USER_SPEED.search(text)
    return None if m is None else float(m.group("zh") or m.group("en"))


def user_speed_line(parsed: ParsedQuestion, rec: Any) -> Text | None:
    """A stated per-user speed compared with the plan's (slow end first): met or not, and what to change."""
    target = user_speed_target(parsed.text)
    sp = (getattr(rec, "choices", None) or {}).get("serving_speed")
    if target is None or not sp or parsed.workload_fields.get("task") != "inference":
        return None
    lo, hi = sp["user_tok_s"]
    est_en = f"about {lo:.0f}-{hi:.0f} output tokens/s per user at {sp['sequences']} sequences a replica ({sp['gpus']} × {sp['gpu']})"
    est_zh = f"每副本 {sp['sequences']} 条序列时每个用户约 {lo:.0f}–{hi:.0f} 个输出 token/秒（{sp['gpus']} 张 {sp['gpu']}）"
    fix_en = ("fewer sequences a replica (more replicas behind the load balancer), a GPU with more memory bandwidth, or "
              "more GPUs in tensor parallel per replica; measure with vLLM benchmark_serving (TPOT)")
    fix_zh = "每副本更少的序列（更多副本做负载均衡）、换显存带宽更高的 GPU，或每副本用更多卡做张量并行；用 vLLM benchmark_serving 实测 TPOT"
    if round(lo) >= target:
        return Text(en=f"Per-user speed {target:g} tokens/s: met — {est_en}.", zh=f"每用户 {target:g} token/秒：满足——{est_zh}。")
    verdict_en, verdict_zh = ("not met", "不满足") if round(hi) < target else ("met only at the fast end", "只在快的一端满足")
    return Text(en=f"Per-user speed {target:g} tokens/s: {verdict_en} — {est_en}. To meet it: {fix_en}.",
                zh=f"每用户 {target:g} token/秒：{verdict_zh}——{est_zh}。要达到：{fix_zh}。")


def ttft_target(text: str) -> float | None:
    """Seconds of a stated first-token target, None without one."""
    m = TARGET.search(text)
    if m is None:
        return None
    value = float(m.group("num"))
    return value / 1000 if m.group("unit").lower() in ("ms", "毫秒") else value


def _s(x: float) -> str:
    return f"{x * 1e3:.0f} ms" if x < 0.95 else f"{x:.1f} s"


def ttft_line(parsed: ParsedQuestion, rec: Any) -> Text | None:
    if parsed.workload_fields.get("task") != "inference":
        return None
    sp = (getattr(rec, "choices", None) or {}).get("serving_speed")
    target = ttft_target(parsed.text)
    if not sp or (target is None and not ASKED.search(parsed.text)):
        return None
    lo, hi = sp["ttft_s"]
    prompt, n, gpus, gpu = sp["prompt_tokens"], sp["sequences"], sp["gpus"], sp["gpu"]
    where_en = f"{gpus} × {gpu}"
    where_zh = f"{gpus} 张 {gpu}"
    basis_en = ("prefill FLOPs 2 × active params × prompt tokens at the GPU's dense peak × 40-71 % utilisation "
                "(bench/serve_throughput_accuracy.py)")
    basis_zh = "预填充 FLOPs = 2 × 激活参数 × 提示 token，按 GPU 稠密峰值的 40%–71% 计（bench/serve_throughput_accuracy.py）"
    if sp["queued"]:
        est_en = f"time to first token about {_s(lo)}-{_s(hi)} at {n} concurrent sequences a replica ({where_en}; prompt {prompt} tokens, including the wait behind other prefills)"
        est_zh = f"首 token 延迟约 {_s(lo)}–{_s(hi)}（每副本 {n} 路并发，{where_zh}；提示 {prompt} token，含排在其他预填充之后的等待）"
    else:
        est_en = (f"a prompt of up to {prompt} tokens prefills alone in about {_s(lo)}-{_s(hi)} on {where_en} (the time to "
                  "first token with nothing queued; under load it grows, so state the concurrency and output length for "
                  "the loaded figure)")
        est_zh = (f"一条至多 {prompt} token 的提示在 {where_zh} 上单独预填充约 {_s(lo)}–{_s(hi)}（无排队时的首 token 延迟；"
                  "有负载时更长，给出并发和输出长度可算有负载时的数值）")
    if not parsed.workload_fields.get("seq_len"):   # the assumed context decides the figure: said
        basis_en += f"; prompt length not stated: the {sp['prompt_tokens']}-token default assumed (state yours, e.g. 'prompt 1000 tokens')"
        basis_zh += f"；未给出提示长度：按默认 {sp['prompt_tokens']} token 估算（请给出实际长度，如“输入 1000 token”）"
    if target is None:
        return Text(en=f"Time to first token: {est_en}; {basis_en}.", zh=f"首 token 延迟：{est_zh}；{basis_zh}。")
    fix_en = ("shorter prompts (prefill time scales with prompt tokens), a GPU with a higher dense peak, more GPUs in tensor "
              "parallel per replica" + (", or more replicas so fewer requests queue on each (vLLM chunked prefill "
                                        "also caps the wait)" if sp["queued"] else ""))
    fix_zh = ("缩短提示（预填充时间与提示 token 数成正比）、换稠密算力更高的 GPU、每副本用更多卡做张量并行"
              + ("，或增加副本让每个副本排队的请求更少（vLLM chunked prefill 也能限制等待）" if sp["queued"] else ""))
    t_en, t_zh = _s(target), _s(target)
    if hi <= target:
        return Text(en=f"TTFT target {t_en}: met — {est_en}; {basis_en}. Confirm with vLLM benchmark_serving at your load.",
                    zh=f"首 token 延迟目标 {t_zh}：满足——{est_zh}；{basis_zh}。请按实际负载用 vLLM benchmark_serving 实测确认。")
    if lo > target:
        return Text(en=f"TTFT target {t_en}: not met — {est_en}; {basis_en}. To meet it: {fix_en}.",
                    zh=f"首 token 延迟目标 {t_zh}：不满足——{est_zh}；{basis_zh}。要达到：{fix_zh}。")
    return Text(en=f"TTFT target {t_en}: met only at the fast end — {est_en}; {basis_en}. For margin: {fix_en}.",
                zh=f"首 token 延迟目标 {t_zh}：只在快的一端满足——{est_zh}；{basis_zh}。要留余量：{fix_zh}。")


__all__ = ["ttft_line", "ttft_target", "user_speed_line", "user_speed_target"]
