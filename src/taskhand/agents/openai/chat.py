"""Chat Completions over HTTP: one request, its answer as plain JSON, a provider's errors.

The openai backend speaks the wire format itself over httpx2, the transport the openai SDK
uses, so proxies, certificates and timeouts behave as they did with the SDK: importing the
SDK and its hundreds of response types took longer than all of a run's own work.
"""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Mapping
from typing import Any

import httpx2

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# The SDK sent these when they were set: a key scoped to a project or organization needs them.
_HEADERS_FROM_ENV = {"OPENAI_ORG_ID": "OpenAI-Organization", "OPENAI_PROJECT_ID": "OpenAI-Project"}


class ProviderError(Exception):
    """An answer that is not a Chat Completion."""


class StatusError(ProviderError):
    """The provider answered with an HTTP error; the message carries its own words."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"HTTP {status}: {detail}")
        self.status = status


class Unreachable(ProviderError):
    """No answer: the connection failed or the request timed out (worth another try)."""


class Certificates:
    """The certificates httpx2 trusts (SSL_CERT_FILE and SSL_CERT_DIR honoured), loaded once on
    a thread of their own from the moment they are asked for: loading them takes longer than a
    request to a local server, and it lets the run get ready meanwhile (it releases the GIL)."""

    def __init__(self) -> None:
        self._context: ssl.SSLContext | None = None
        self._error: Exception | None = None
        self._loading = threading.Thread(target=self._load, name="certificates", daemon=True)
        self._loading.start()

    def _load(self) -> None:
        try:
            self._context = httpx2.create_ssl_context()
        except Exception as exc:  # raised where they are used, as if loaded there
            self._error = exc

    def get(self) -> ssl.SSLContext:
        self._loading.join()
        if self._error is not None:
            raise self._error
        assert self._context is not None
        return self._context


class ChatClient:
    """Requests to one endpoint over one kept-alive connection, until `close`."""

    def __init__(
        self, base_url: str | None, api_key: str, env: Mapping[str, str], tls: ssl.SSLContext
    ) -> None:
        self._url = (base_url or DEFAULT_BASE_URL).rstrip("/") + "/chat/completions"
        self._headers = {
            "Authorization": f"Bearer {api_key}",
            "Accept": "application/json",
            **{header: env[name] for name, header in _HEADERS_FROM_ENV.items() if env.get(name)},
        }
        self._http = httpx2.Client(verify=tls, follow_redirects=True)

    def __enter__(self) -> ChatClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.close()

    def create(
        self,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]],
        timeout: float,
    ) -> dict[str, Any]:
        """The provider's completion of the conversation so far, as its JSON object."""
        body = {"model": model, "messages": messages, "tools": tools}
        try:
            answer = self._http.post(self._url, json=body, headers=self._headers, timeout=timeout)
        except httpx2.TimeoutException:
            raise Unreachable("Request timed out.") from None
        except httpx2.HTTPError:
            raise Unreachable("Connection error.") from None
        if answer.status_code >= 400:
            raise StatusError(answer.status_code, _detail(answer))
        try:
            completion = json.loads(answer.content)
        except ValueError as exc:
            raise ProviderError(f"it is not JSON ({exc})") from None
        if not isinstance(completion, dict):
            raise ProviderError("it is not a JSON object")
        return completion


def _detail(answer: httpx2.Response) -> str:
    """The provider's own words for an error response: its error's message, else its text."""
    text = answer.text.strip()
    try:
        body: Any = json.loads(text)
    except ValueError:
        body = text
    error = body.get("error", body) if isinstance(body, dict) else body
    message = error.get("message") if isinstance(error, dict) else error
    if isinstance(message, str) and message.strip():
        return message.strip()[:1000]
    return f"Error code: {answer.status_code}"
