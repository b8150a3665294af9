"""Bearer-token check and request-size limit, as ASGI middleware in front of every route.

Both run before a route parses anything: an unauthenticated request is refused (401) without its body being read,
and a body over the limit is refused (413) from its ``Content-Length`` or, for a streamed body, as soon as the
bytes received pass the limit.
"""

from __future__ import annotations

import hmac
from typing import Any

from fastapi import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

#: Paths anyone may read: the liveness probe and the API schema (no task data).
PUBLIC_PATHS: frozenset[str] = frozenset({"/health", "/openapi.json", "/docs", "/docs/oauth2-redirect", "/redoc"})


def token_matches(header: str | None, token: str) -> bool:
    """``Authorization: Bearer <token>``, compared in constant time."""
    if not header:
        return False
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), token.encode())


class Guard:
    """Refuse requests without the token (except :data:`PUBLIC_PATHS`) and bodies over ``max_body_bytes``."""

    def __init__(self, app: ASGIApp, token: str, max_body_bytes: int) -> None:
        if not token:
            raise ValueError("a token is required")
        self.app = app
        self.token = token
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if scope["path"] not in PUBLIC_PATHS and not token_matches(headers.get("authorization"), self.token):
            await _reply(scope, receive, send, 401, "missing or wrong token: send 'Authorization: Bearer <token>'",
                         {"WWW-Authenticate": "Bearer"})
            return
        length = headers.get("content-length")
        if length is not None:
            if not length.isdigit():
                await _reply(scope, receive, send, 400, f"bad Content-Length {length[:40]!r}")
                return
            if int(length) > self.max_body_bytes:
                await _reply(scope, receive, send, 413, self._too_large(int(length)))
                return
        received = 0

        async def limited_receive() -> dict[str, Any]:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    raise HTTPException(413, self._too_large(received))
            return message

        await self.app(scope, limited_receive, send)

    def _too_large(self, size: int) -> str:
        return f"request body of {size} bytes or more; the limit is {self.max_body_bytes} bytes (--max-body-mb)"


async def _reply(scope: Scope, receive: Receive, send: Send, status: int, detail: str,
                 headers: dict[str, str] | None = None) -> None:
    await JSONResponse({"detail": detail}, status_code=status, headers=headers)(scope, receive, send)
