"""The LLM plugin and service: keys by variable name, registration, defaults, disposal."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from pydantic import ValidationError

from starharness.mockllm import MockLlmServer
from starharness.runtime.kernel import Context
from starharness.runtime.llm import (
    LLM,
    LlmConfig,
    LlmPlugin,
    LlmRequest,
    LlmService,
    MissingCredentialError,
    OpenAICompatibleProvider,
    ProviderConfigError,
    TextDelta,
    UnknownProviderError,
    UserMessage,
    build_provider,
)

KEY = "sk-plugin-0c4a7e91"
VARIABLES = (
    "DEEPSEEK_API_KEY",
    "DEEPSEEK_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_COMPATIBLE_API_KEY",
    "OPENAI_COMPATIBLE_BASE_URL",
    "MY_LLM_KEY",
)


@pytest.fixture(autouse=True)
def clean_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No key from the developer's environment, ./.env or home may leak into a test."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("STAR_HARNESS_HOME", str(home))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


@pytest_asyncio.fixture
async def mock() -> AsyncIterator[MockLlmServer]:
    async with MockLlmServer(api_key=KEY) as server:
        yield server


def _request(session_id: str = "plugin-session") -> LlmRequest:
    return LlmRequest(model="", system="", messages=[UserMessage("hi")], session_id=session_id)


async def _start(config: LlmConfig) -> Context:
    root = Context()
    await LlmPlugin().setup(root.fork("llm"), config)
    return root


async def test_deepseek_is_the_default_and_reads_key_and_base_url_from_the_environment(
    mock: MockLlmServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", KEY)
    monkeypatch.setenv("DEEPSEEK_BASE_URL", mock.base_url)
    mock.script("plugin-session", [{"behaviour": "success", "text": "from the plugin"}])
    root = await _start(LlmConfig())
    try:
        provider = root.get(LLM).get()
        assert provider.name == "deepseek"
        assert root.get(LLM).default_model == "deepseek-v4-flash"
        request = _request()
        request.model = root.get(LLM).default_model
        chunks = [c async for c in root.get(LLM).stream(request)]
        assert "".join(c.text for c in chunks if isinstance(c, TextDelta)) == "from the plugin"
        assert mock.requests[0].headers["x-star-harness-session"] == "plugin-session"
        assert mock.requests[0].body["model"] == "deepseek-v4-flash"
        assert "max_tokens" not in mock.requests[0].body
    finally:
        await root.dispose()
    assert not root.has(LLM)


async def test_missing_key_is_a_one_line_error_naming_the_variable() -> None:
    with pytest.raises(MissingCredentialError) as caught:
        await _start(LlmConfig(provider="deepseek"))
    message = str(caught.value)
    assert message.startswith("DEEPSEEK_API_KEY is not set")
    assert "\n" not in message
    with pytest.raises(MissingCredentialError, match=r"^OPENAI_API_KEY is not set"):
        await _start(LlmConfig(provider="openai"))
    with pytest.raises(MissingCredentialError, match=r"^MY_LLM_KEY is not set"):
        await _start(LlmConfig(provider="openai", api_key_env="MY_LLM_KEY"))


async def test_key_from_dotenv_and_a_custom_variable(
    mock: MockLlmServer, clean_credentials: Path
) -> None:
    (clean_credentials / ".env").write_text(f"MY_LLM_KEY={KEY}\n")
    config = LlmConfig(
        provider="openai", api_key_env="MY_LLM_KEY", base_url=mock.base_url, max_tokens=321
    )
    mock.script("plugin-session", ["success"])
    root = await _start(config)
    try:
        [_ async for _ in root.get(LLM).stream(_request())]
        assert mock.requests[0].headers["authorization"] == f"Bearer {KEY}"
        assert mock.requests[0].body["max_completion_tokens"] == 321
        assert KEY not in repr(root.get(LLM).get())
    finally:
        await root.dispose()


def test_a_key_pasted_as_variable_name_is_refused_without_echoing_it() -> None:
    with pytest.raises(ValidationError) as caught:
        LlmConfig(api_key_env=KEY)
    assert "api_key_env" in str(caught.value)
    assert KEY not in str(caught.value)


def test_unknown_provider_is_refused_listing_the_known_ones() -> None:
    with pytest.raises(ValidationError, match="openai-compatible"):
        LlmConfig(provider="clippy")


async def test_compatible_server_needs_a_base_url_and_a_model_but_no_key(
    mock: MockLlmServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(ProviderConfigError, match="OPENAI_COMPATIBLE_BASE_URL"):
        await build_provider(LlmConfig(provider="openai-compatible", model="m"))
    with pytest.raises(ProviderConfigError, match="set model"):
        await build_provider(LlmConfig(provider="openai-compatible", base_url=mock.base_url))
    monkeypatch.setenv("OPENAI_COMPATIBLE_BASE_URL", mock.base_url)
    provider = await build_provider(LlmConfig(provider="openai-compatible", model="local"))
    try:
        assert provider.default_model == "local"
        assert provider.url == mock.base_url + "/chat/completions"
    finally:
        await provider.aclose()


async def test_config_timeouts_and_retry_reach_the_provider_and_service(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", KEY)
    config = LlmConfig.model_validate(
        {
            "timeouts": {"first_byte_s": 5, "idle_s": 2},
            "retry": {"max_attempts": 7},
            "max_tokens": 1000,
        }
    )
    root = await _start(config)
    try:
        provider = root.get(LLM).get()
        assert isinstance(provider, OpenAICompatibleProvider)
        assert (provider.timeouts.first_byte, provider.timeouts.idle) == (5, 2)
        assert root.get(LLM).settings().retry.max_attempts == 7
        assert root.get(LLM).settings().max_tokens == 1000
    finally:
        await root.dispose()


async def test_two_rows_share_one_service_and_default_can_be_chosen(
    mock: MockLlmServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEEPSEEK_API_KEY", KEY)
    root = Context()
    await LlmPlugin().setup(root.fork("llm"), LlmConfig())
    local = LlmConfig(
        provider="openai-compatible", name="local", base_url=mock.base_url, model="m", default=True
    )
    second = root.fork("llm-local")
    await LlmPlugin().setup(second, local)
    try:
        assert root.get(LLM).names() == ("deepseek", "local")
        assert root.get(LLM).get().name == "local"
        await second.dispose()
        assert root.get(LLM).names() == ("deepseek",)
        assert root.get(LLM).get().name == "deepseek"
    finally:
        await root.dispose()


class _Named:
    def __init__(self, name: str) -> None:
        self.name = name
        self.default_model = f"{name}-model"

    def stream(self, request: LlmRequest) -> AsyncIterator[TextDelta]:
        raise NotImplementedError

    async def aclose(self) -> None:
        pass


def test_service_registry_rules() -> None:
    service = LlmService()
    with pytest.raises(UnknownProviderError, match="no LLM provider is registered"):
        service.get()
    undo_a = service.register(_Named("a"))
    service.register(_Named("b"))
    with pytest.raises(ValueError, match="already registered"):
        service.register(_Named("a"))
    assert service.get().name == "a"
    assert service.default_model == "a-model"
    with pytest.raises(UnknownProviderError, match="registered: a, b"):
        service.get("c")
    undo_a()
    undo_a()
    assert service.default_name == "b"
    assert service.names() == ("b",)


async def test_a_configured_context_window_replaces_the_profiles(mock: MockLlmServer) -> None:
    config = LlmConfig(provider="llama-cpp", base_url=mock.base_url, context_window=16_384)
    provider = await build_provider(config)
    default = await build_provider(LlmConfig(provider="llama-cpp", base_url=mock.base_url))
    try:
        assert provider.profile.context_window == 16_384
        assert default.profile.context_window == 8_192
        # Only this provider's copy: the built-in profile stays as shipped.
        assert provider.profile.name == default.profile.name == "llama-cpp"
    finally:
        await provider.aclose()
        await default.aclose()
    with pytest.raises(ValueError, match="greater than or equal to 256"):
        LlmConfig(provider="llama-cpp", context_window=100)


async def test_a_configured_continues_calls_replaces_the_profiles(mock: MockLlmServer) -> None:
    # Another llama-cpp-python server than `models serve-local` reads a begun call as finished.
    config = LlmConfig(provider="llama-cpp", base_url=mock.base_url, continues_calls=False)
    provider = await build_provider(config)
    default = await build_provider(LlmConfig(provider="llama-cpp", base_url=mock.base_url))
    try:
        assert provider.profile.continues_calls is False
        assert default.profile.continues_calls is True
    finally:
        await provider.aclose()
        await default.aclose()
