"""``drk serve``: run the evaluation service (uvicorn) until interrupted."""

from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import sys
from collections.abc import Sequence

TOKEN_ENV = "DRK_SERVE_TOKEN"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="drk serve", description="Judge Triton kernels over HTTP (KernelGYM-compatible API; docs/kernelgym.md).")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this host only)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--token", default=None,
                        help=f"bearer token clients must send (default: ${TOKEN_ENV}; the variable keeps it out of ps)")
    parser.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto")
    parser.add_argument("--db", default=".drk_serve.sqlite", help="SQLite file of tasks and results (resumed on start)")
    parser.add_argument("--workers", type=int, default=None, help="concurrent evaluations (default: Pool's)")
    parser.add_argument("--max-queue", type=int, default=1024, help="unfinished tasks at most (429 beyond)")
    parser.add_argument("--max-body-mb", type=float, default=32.0, help="request body size limit (413 beyond)")
    parser.add_argument("--max-code-chars", type=int, default=1_000_000,
                        help="reference_code / kernel_code size limit per task (413 beyond)")
    parser.add_argument("--wait-s", type=float, default=600.0,
                        help="how long POST /evaluate waits for a verdict before answering 202")
    parser.add_argument("--cache-dir", default=None, help="Pool result cache (default: none)")
    parser.add_argument("--problems", default=None,
                        help="accept only these references (anything drk.gym.load_problems takes, e.g. drk:all or a "
                             "KernelBench folder): a reference runs as trusted code, so a shared server should set it")
    parser.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        import uvicorn

        from drk.serve.app import create_app
        from drk.serve.settings import ServeSettings
    except ImportError as exc:
        print(f"drk serve: {exc}; install the server's packages: pip install 'drk[serve]'", file=sys.stderr)
        return 2
    token = args.token or os.environ.get(TOKEN_ENV, "")
    try:
        from drk.gym.evaluate import resolve_device

        resolve_device(args.device)  # 'cuda' without a GPU: say so here, not in a traceback at start-up
    except ValueError as exc:
        print(f"drk serve: {exc}", file=sys.stderr)
        return 2
    allowed = None
    if args.problems:
        from drk.gym import load_problems
        from drk.serve.settings import reference_key

        try:
            allowed = frozenset(reference_key(p.source) for p in load_problems(args.problems))
        except (OSError, ValueError) as exc:
            print(f"drk serve: --problems {args.problems!r}: {exc}", file=sys.stderr)
            return 2
    try:
        settings = ServeSettings(token=token, allowed_references=allowed, device=args.device, db=args.db, workers=args.workers,
                                 max_queue=args.max_queue, max_body_bytes=int(args.max_body_mb * 2**20),
                                 max_code_chars=args.max_code_chars, wait_s=args.wait_s, cache_dir=args.cache_dir)
    except ValueError as exc:
        print(f"drk serve: {exc} (--token or ${TOKEN_ENV})", file=sys.stderr)
        return 2
    if not _is_loopback(args.host):
        print(f"drk serve: warning: listening on {args.host}, reachable from other hosts; the token is sent in "
              "clear text without TLS (put a TLS proxy in front, see docs/kernelgym.md)", file=sys.stderr)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    uvicorn.run(create_app(settings), host=args.host, port=args.port, log_level=args.log_level,
                timeout_graceful_shutdown=5)
    return 0


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


if __name__ == "__main__":
    sys.exit(main())
