"""Evaluating policies: multi-turn episodes, sequential test-time scaling, and their scores.

    policies          Policy protocol; HFPolicy (local HF model + LoRA), OpenAIPolicy (chat endpoint)
    factory           make_policy(kind, ...): a policy and its record label by name (notebook 04)
    replay            ReplayPolicy (stored replies), replies built from the bundled solutions
    context           the task/feedback messages (drk.chat's words); vanilla vs best-w context management
    runner            evaluate_policy(policy, problems, EvalRunConfig) -> EvalRecord JSONL (+ config sidecar)
    summary           fast_p_table, fast_p_long (paper-table rows), eval_stats, stts_curves
    profiling_cases   decoy / lazy / fused candidates for Figure 2 (right) and Figure 10
"""

from drk.eval.context import CONTEXTS, build_messages, select_window
from drk.eval.factory import POLICY_KINDS, make_policy
from drk.eval.policies import EndpointError, HFPolicy, OpenAIPolicy, Policy, RequestMeta
from drk.eval.profiling_cases import measure_profiling_cases, profiling_case_sources
from drk.eval.records import EvalRecord, load_records, save_parquet
from drk.eval.replay import ReplayPolicy, solution_replies
from drk.eval.runner import EvalRunConfig, default_evaluator, evaluate_policy
from drk.eval.summary import eval_stats, fast_p_long, fast_p_table, stts_curves

__all__ = [
    "CONTEXTS", "EndpointError", "EvalRecord", "EvalRunConfig", "HFPolicy", "OpenAIPolicy", "Policy", "ReplayPolicy", "RequestMeta",
    "POLICY_KINDS", "build_messages", "default_evaluator", "eval_stats", "evaluate_policy", "fast_p_long", "fast_p_table",
    "load_records", "make_policy", "measure_profiling_cases", "save_parquet", "profiling_case_sources", "select_window", "solution_replies", "stts_curves",
]
