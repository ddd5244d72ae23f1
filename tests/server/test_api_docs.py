"""`/docs` is served from this process: its page names no other host, everything it names is
served here, and its Content-Security-Policy keeps the browser on this origin."""

from __future__ import annotations

import base64
import hashlib
import re
from urllib.parse import urljoin, urlsplit

import pytest

from tests.conftest import LiveServer, ServerFactory

_REFERENCE = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']|url\s*:\s*["']([^"']+)["']""")


@pytest.fixture
def server(server_factory: ServerFactory) -> LiveServer:
    return server_factory()


def test_the_docs_page_references_no_external_host(server: LiveServer) -> None:
    client = server.client(None)
    page = client.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text
    assert not re.search(r"//[A-Za-z0-9\[]", html)  # no absolute or scheme-relative URL
    references = [a or b for a, b in _REFERENCE.findall(html)]
    assert {"swagger-ui-bundle.js", "swagger-ui.css", "favicon.png", "openapi.json"} <= {
        r.rsplit("/", 1)[-1] for r in references
    }
    for reference in references:
        absolute = urljoin(server.url + "/docs", reference)
        assert urlsplit(absolute).netloc == urlsplit(server.url).netloc, reference
        assert client.get(absolute).status_code == 200, reference  # served by this process
    assert '"validatorUrl": null' in html  # no badge image from validator.swagger.io


def test_the_docs_page_lets_the_browser_load_from_this_origin_only(server: LiveServer) -> None:
    page = server.client(None).get("/docs")
    policy = dict(
        part.strip().split(" ", 1) for part in page.headers["content-security-policy"].split(";")
    )
    assert policy["default-src"] == "'none'"
    assert policy["connect-src"] == "'self'" and policy["img-src"] == "'self' data:"
    assert "http" not in page.headers["content-security-policy"]
    assert "'unsafe-inline'" not in policy["script-src"]
    # The page's inline start-up script is allowed by its hash, so Swagger UI does start.
    inline = re.findall(r"<script>(.*?)</script>", page.text, flags=re.DOTALL)
    assert len(inline) == 1
    digest = base64.b64encode(hashlib.sha256(inline[0].encode()).digest()).decode()
    assert f"'sha256-{digest}'" in policy["script-src"]


def test_swagger_ui_files_are_served_and_redoc_is_not(server: LiveServer) -> None:
    client = server.client(None)
    script = client.get("/docs/static/swagger-ui-bundle.js")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert b"SwaggerUIBundle" in script.content
    assert client.get("/docs/static/nothing.js").json()["error"]["code"] == "not_found"
    assert client.get("/redoc").status_code == 404  # it loaded a CDN script and web fonts
    assert client.get("/docs/oauth2-redirect").status_code == 200
