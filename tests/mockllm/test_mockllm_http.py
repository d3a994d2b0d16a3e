"""The HTTP layer on raw sockets: keep-alive, framing, bad input, routes, auth."""

import asyncio
import json

import httpx
import pytest
from mockllm_client import chat_body

from starharness.mockllm import MockLlmServer, Success


async def _exchange(port: int, raw: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(raw)
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), timeout=5)
    writer.close()
    return data


def _post(body: bytes, *extra: str, connection: str = "keep-alive") -> bytes:
    head = [
        "POST /v1/chat/completions HTTP/1.1",
        "Host: x",
        f"Content-Length: {len(body)}",
        f"Connection: {connection}",
        *extra,
    ]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


async def test_keep_alive_serves_several_requests_on_one_connection(
    mock_llm: MockLlmServer,
) -> None:
    mock_llm.script("default", [Success(text="one"), Success(text="two"), Success(text="three")])
    body = json.dumps(chat_body(stream=True)).encode()
    no_stream = json.dumps(chat_body(stream=False)).encode()

    # Three pipelined requests, the last one asking to close; the server answers all in order.
    raw = _post(body) + _post(no_stream) + _post(body, connection="close")
    data = await _exchange(mock_llm.port, raw)

    assert data.count(b"HTTP/1.1 200 OK") == 3
    assert data.index(b'"one"') < data.index(b'"two"') < data.index(b'"three"')
    assert data.endswith(b"0\r\n\r\n")
    assert b"Connection: close" in data


async def test_chunked_request_body_is_accepted(mock_llm: MockLlmServer) -> None:
    mock_llm.script("default", [Success(text="chunked ok")])
    body = json.dumps(chat_body(stream=False)).encode()
    chunked = b"%x\r\n%b\r\n0\r\n\r\n" % (len(body), body)
    head = (
        "POST /chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
        "Connection: close\r\n\r\n"
    )

    data = await _exchange(mock_llm.port, head.encode() + chunked)

    assert b"HTTP/1.1 200 OK" in data
    assert b"chunked ok" in data


@pytest.mark.parametrize(
    ("raw", "fragment"),
    [
        (b"NONSENSE\r\n\r\n", b"bad request line"),
        (b"POST /v1/chat/completions HTTP/1.1\r\nbroken header\r\n\r\n", b"bad header line"),
        (b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: ten\r\n\r\n", b"Content-Length"),
    ],
)
async def test_malformed_http_gets_400_and_close(
    mock_llm: MockLlmServer, raw: bytes, fragment: bytes
) -> None:
    data = await _exchange(mock_llm.port, raw)

    assert data.startswith(b"HTTP/1.1 400 ")
    assert b"Connection: close" in data
    assert fragment in data


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "must be a JSON object"),
        (b'{"messages": [{"role": "user", "content": "x"}]}', "model"),
        (b'{"model": "m", "messages": [{"content": "x"}]}', "messages.0.role"),
        (b"\xff\xfe", "not valid UTF-8"),
    ],
)
async def test_bad_chat_bodies_get_400_naming_the_problem(
    mock_llm: MockLlmServer, http: httpx.AsyncClient, body: bytes, fragment: str
) -> None:
    mock_llm.script("default", ["success"])

    response = await http.post(f"{mock_llm.base_url}/chat/completions", content=body)

    assert response.status_code == 400
    assert fragment in response.json()["error"]["message"]
    with pytest.raises(AssertionError):
        mock_llm.assert_complete()  # a rejected request consumes no step


async def test_unknown_route_and_wrong_method(
    mock_llm: MockLlmServer, http: httpx.AsyncClient
) -> None:
    missing = await http.post(f"{mock_llm.base_url}/embeddings", json={})
    wrong_method = await http.get(f"{mock_llm.base_url}/chat/completions")
    models_without_v1 = await http.get(f"{mock_llm.origin}/models")

    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "unknown_url"
    assert wrong_method.status_code == 405
    assert models_without_v1.json()["data"][0]["id"] == "mock-model"


async def test_bearer_key_is_checked(http: httpx.AsyncClient) -> None:
    async with MockLlmServer(api_key="secret", models=("a", "b")) as mock:
        mock.script("default", ["success"])
        missing = await http.get(f"{mock.base_url}/models")
        wrong = await http.get(f"{mock.base_url}/models", headers={"Authorization": "Bearer no"})
        right = await http.get(
            f"{mock.base_url}/models", headers={"Authorization": "Bearer secret"}
        )

    assert (missing.status_code, wrong.status_code, right.status_code) == (401, 401, 200)
    assert missing.json()["error"]["code"] == "invalid_api_key"
    assert [model["id"] for model in right.json()["data"]] == ["a", "b"]


async def test_base_url_and_port(mock_llm: MockLlmServer) -> None:
    assert mock_llm.port > 0
    assert mock_llm.base_url == f"http://127.0.0.1:{mock_llm.port}/v1"


async def test_start_twice_is_refused() -> None:
    async with MockLlmServer() as mock:
        with pytest.raises(RuntimeError, match="already started"):
            await mock.start()


def test_bad_settings_are_named() -> None:
    with pytest.raises(ValueError, match="time_scale"):
        MockLlmServer(time_scale=-1)
    with pytest.raises(ValueError, match="chars_per_token"):
        MockLlmServer(chars_per_token=0)


async def test_expect_100_continue_is_answered_before_the_body(mock_llm: MockLlmServer) -> None:
    mock_llm.script("default", [Success(text="continued")])
    body = json.dumps(chat_body(stream=False)).encode()
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {len(body)}\r\n"
        "Expect: 100-continue\r\nConnection: close\r\n\r\n"
    )
    reader, writer = await asyncio.open_connection("127.0.0.1", mock_llm.port)
    writer.write(head.encode())

    interim = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=5)
    writer.write(body)
    rest = await asyncio.wait_for(reader.read(), timeout=5)
    writer.close()

    assert interim == b"HTTP/1.1 100 Continue\r\n\r\n"
    assert b"continued" in rest
