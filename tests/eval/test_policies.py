"""Policy transports. OpenAIPolicy is tested against a real HTTP server started here (http.server in a thread,
implementing /v1/chat/completions); a real vLLM server is a separate, later test."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from drk.eval.policies import EndpointError, OpenAIPolicy, render_plain


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        server = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        server.requests.append((self.path, dict(self.headers), body))
        status = server.statuses.pop(0) if server.statuses else 200
        if status != 200:
            self.send_response(status)
            self.end_headers()
            self.wfile.write(b'{"error": "nope"}')
            return
        n = min(body.get("n", 1), server.max_n)
        last = body["messages"][-1]["content"]
        choices = [{"index": i, "message": {"role": "assistant", "content": f"{last}#{i}"}} for i in range(n)]
        payload = json.dumps({"choices": choices}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.requests, httpd.statuses, httpd.max_n = [], [], 16
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def _policy(server, **kw):
    return OpenAIPolicy("tiny", base_url=f"http://127.0.0.1:{server.server_port}/v1", backoff_s=0.01, **kw)


def test_chat_completions_round_trip_with_auth_and_sampling(server, monkeypatch):
    monkeypatch.setenv("DRK_TEST_KEY", "secret")
    policy = _policy(server, api_key_env="DRK_TEST_KEY")
    batch = [[{"role": "user", "content": "a"}], [{"role": "user", "content": "b"}]]
    out = policy.generate(batch, n=2, temperature=0.7, top_p=0.9, max_new_tokens=64)
    assert out == [["a#0", "a#1"], ["b#0", "b#1"]]
    path, headers, body = server.requests[0]
    assert path == "/v1/chat/completions" and headers["Authorization"] == "Bearer secret"
    assert body["model"] == "tiny" and body["max_tokens"] == 64 and body["top_p"] == 0.9
    assert "secret" not in json.dumps(policy.describe())


def test_servers_that_cap_n_are_asked_again(server):
    server.max_n = 1
    assert _policy(server).generate([[{"role": "user", "content": "q"}]], n=3) == [["q#0", "q#0", "q#0"]]
    assert len(server.requests) == 3 and [r[2]["n"] for r in server.requests] == [3, 2, 1]


def test_retries_transient_errors_then_succeeds(server):
    server.statuses = [503, 429]
    assert _policy(server, max_retries=2).generate([[{"role": "user", "content": "q"}]]) == [["q#0"]]
    assert len(server.requests) == 3


def test_gives_up_with_a_clear_error(server):
    server.statuses = [503] * 5
    with pytest.raises(EndpointError, match="after 2 attempts.*HTTP 503"):
        _policy(server, max_retries=1).generate([[{"role": "user", "content": "q"}]])
    server.statuses = [401]
    with pytest.raises(EndpointError, match=r"set \$OPENAI_API_KEY"):
        _policy(server).generate([[{"role": "user", "content": "q"}]])
    server.statuses = [400]
    with pytest.raises(EndpointError, match="model='tiny'"):
        _policy(server).generate([[{"role": "user", "content": "q"}]])


def test_connection_refused_is_retried_then_reported():
    policy = OpenAIPolicy("m", base_url="http://127.0.0.1:9/v1", max_retries=1, backoff_s=0.01, timeout_s=2)
    with pytest.raises(EndpointError, match="ConnectError"):
        policy.generate([[{"role": "user", "content": "q"}]])


def test_render_plain_transcript():
    text = render_plain([{"role": "system", "content": "s"}, {"role": "user", "content": "u"},
                         {"role": "assistant", "content": "a"}, {"role": "user", "content": "f"}])
    assert text == "s\n\n### Problem\nu\n\n### Answer\na\n\n### Feedback\nf\n\n### Answer\n"
