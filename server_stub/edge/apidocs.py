"""`/docs`: Swagger UI served from this process, with nothing loaded from another host.

FastAPI's own `/docs` page loads Swagger UI's script from a CDN without integrity, so
whoever serves (or intercepts) that script runs code in a page that can call the API as
the user. The script, style sheet and icon come from the `fastapi-offline` wheel instead
(Swagger UI 5, a small wheel; docs/decisions/0050), under
`/docs/static/`, and the page carries a Content-Security-Policy that lets the browser load
and connect to this origin only, so no later change of the HTML can reach out either.
Swagger UI's spec validator badge (an image from validator.swagger.io) is turned off.
ReDoc (`/redoc`) is not served: the contract names `/docs` only, and FastAPI's ReDoc page
loads both a CDN script and web fonts.
"""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import fastapi_offline
from fastapi import FastAPI
from fastapi.openapi.docs import get_swagger_ui_html, get_swagger_ui_oauth2_redirect_html
from fastapi.staticfiles import StaticFiles
from starlette.requests import Request
from starlette.responses import HTMLResponse

DOCS_URL = "/docs"
STATIC_URL = "/docs/static"
STATIC_DIR = Path(fastapi_offline.__file__).parent / "static"
_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def content_security_policy(html: str) -> str:
    """Same-origin only; the page's inline scripts are allowed by their hashes (no
    'unsafe-inline' for scripts). Swagger UI sets inline styles and data: images."""
    hashes = " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(s.encode()).digest()).decode() + "'"
        for s in _INLINE_SCRIPT.findall(html)
    )
    return (
        "default-src 'none'; "
        f"script-src 'self' {hashes}; "
        "style-src 'self' 'unsafe-inline'; "
        "img-src 'self' data:; "
        "connect-src 'self'; "
        "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )


def _secured(page: HTMLResponse) -> HTMLResponse:
    html = bytes(page.body).decode()
    page.headers["Content-Security-Policy"] = content_security_policy(html)
    page.headers["X-Content-Type-Options"] = "nosniff"
    return page


def install_docs(app: FastAPI) -> None:
    """Serve `/docs` (and Swagger UI's OAuth2 redirect page) from local files. The app
    must be created with `docs_url=None, redoc_url=None`."""
    openapi_url = app.openapi_url or "/openapi.json"
    redirect_url = f"{DOCS_URL}/oauth2-redirect"
    app.mount(STATIC_URL, StaticFiles(directory=STATIC_DIR), name="docs-static")

    @app.get(DOCS_URL, include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return _secured(
            get_swagger_ui_html(
                openapi_url=f"{root}{openapi_url}",
                title=f"{app.title} - Swagger UI",
                oauth2_redirect_url=f"{root}{redirect_url}",
                swagger_js_url=f"{root}{STATIC_URL}/swagger-ui-bundle.js",
                swagger_css_url=f"{root}{STATIC_URL}/swagger-ui.css",
                swagger_favicon_url=f"{root}{STATIC_URL}/favicon.png",
                swagger_ui_parameters={"validatorUrl": None},
            )
        )

    @app.get(redirect_url, include_in_schema=False)
    async def swagger_ui_redirect() -> HTMLResponse:
        return _secured(get_swagger_ui_oauth2_redirect_html())
