"""The browser-facing security headers, on every response of the API and of the UI it serves.

- `Content-Security-Policy`: the built UI is one script and one stylesheet from its own origin
  (Vite's output has no inline script; React and uPlot set styles through the CSSOM, which CSP
  allows), so only `'self'` is allowed and nothing inline; `frame-ancestors 'none'` forbids
  framing. A response that brings its own policy keeps it: the Swagger UI page (`api.docs`).
- `X-Frame-Options: DENY` for browsers without `frame-ancestors`;
  `X-Content-Type-Options: nosniff`, so an answer is never run as another type than it says.
- `Referrer-Policy: no-referrer`: the UI links to nothing that needs to know where a click came
  from, and an API URL may carry a stream ticket (`?token=`): no URL of the portal leaves it.
- `Strict-Transport-Security` only over TLS (a browser ignores it over plain HTTP, and sending
  it there would pin a development host to HTTPS), or on every response with
  `behind_tls_proxy` when a TLS-terminating proxy speaks plain HTTP to this process.

Pure ASGI, and outside FastAPI's error middleware (`api.main.wrap_outermost`), so that a 500
carries them too.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_SECURITY_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
HSTS = "max-age=31536000"
"""One year; no `includeSubDomains`: the portal cannot know what else runs under its domain."""
HEADERS = (
    ("Content-Security-Policy", CONTENT_SECURITY_POLICY),
    ("X-Frame-Options", "DENY"),
    ("X-Content-Type-Options", "nosniff"),
    ("Referrer-Policy", "no-referrer"),
)
RawHeaders = tuple[tuple[bytes, bytes], ...]
_RAW: RawHeaders = tuple((name.lower().encode(), value.encode()) for name, value in HEADERS)
_RAW_TLS: RawHeaders = (*_RAW, (b"strict-transport-security", HSTS.encode()))
"""Encoded once: each response only appends the ones it lacks."""


def over_tls(scope: Scope, behind_tls_proxy: bool) -> bool:
    """Whether the client reached the portal over HTTPS (as far as this process can tell)."""
    return behind_tls_proxy or scope.get("scheme") == "https"


class SecurityHeadersMiddleware:
    """Add `HEADERS` (and HSTS over TLS) to every HTTP response that does not set them."""

    def __init__(self, app: ASGIApp, *, behind_tls_proxy: bool) -> None:
        self.app = app
        self.behind_tls_proxy = behind_tls_proxy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        wanted = _RAW_TLS if over_tls(scope, self.behind_tls_proxy) else _RAW

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = message["headers"] = list(message.get("headers", ()))
                present = {name.lower() for name, _ in headers}
                headers.extend(header for header in wanted if header[0] not in present)
            await send(message)

        await self.app(scope, receive, send_with_headers)
