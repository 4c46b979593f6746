"""Swagger UI at `/docs`, with a Content-Security-Policy of its own for that page only.

FastAPI's page loads Swagger UI's script and stylesheet from a CDN and starts it with an inline
script, which the portal's policy (`api.security_headers`) forbids. This page's policy allows
the CDN for scripts and styles and that one inline script by its SHA-256 hash (not
`'unsafe-inline'`), and nothing else beyond the portal's own origin. FastAPI's
OAuth2 redirect page (for flows that redirect; the portal's password flow does not) and ReDoc
are not served: two more pages of third-party code on the portal's origin, for nothing.
"""

from __future__ import annotations

import base64
import hashlib
import re

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse

DOCS_URL = "/docs"
CDN = "https://cdn.jsdelivr.net"
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def _script_hashes(html: str) -> str:
    """The CSP source of each inline script of `html`."""
    return " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(script.encode()).digest()).decode() + "'"
        for script in _INLINE_SCRIPT.findall(html)
    )


def docs_policy(html: str) -> str:
    return "; ".join(
        (
            "default-src 'self'",
            f"script-src {CDN} {_script_hashes(html)}",
            f"style-src {CDN}",
            "img-src 'self' data:",
            "object-src 'none'",
            "base-uri 'none'",
            "form-action 'none'",
            "frame-ancestors 'none'",
        )
    )


def mount_docs(app: FastAPI) -> None:
    """Serve Swagger UI for `app`'s OpenAPI document; build `app` with `docs_url=None`."""
    openapi_url = app.openapi_url
    if openapi_url is None:
        return

    async def swagger_ui(request: Request) -> HTMLResponse:
        root_path = request.scope.get("root_path", "").rstrip("/")
        page = get_swagger_ui_html(
            openapi_url=root_path + openapi_url,
            title=f"{app.title} - Swagger UI",
            swagger_favicon_url=root_path + "/favicon.svg",
            # No badge image from the public validator (another origin, told our document).
            swagger_ui_parameters={"validatorUrl": None},
        )
        html = bytes(page.body).decode()
        return HTMLResponse(html, headers={"Content-Security-Policy": docs_policy(html)})

    app.add_api_route(DOCS_URL, swagger_ui, methods=["GET"], include_in_schema=False)
