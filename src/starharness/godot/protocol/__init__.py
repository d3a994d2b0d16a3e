"""The Godot editor RPC wire protocol: methods, ladder, limits, messages and framing."""

from .framing import (
    LineSplitter,
    OversizedLine,
)
from .hygiene import (
    hygiene_problem,
)
from .ladder import (
    timeout_ms,
)
from .messages import (
    MalformedMessageError,
    PlayError,
    RpcResponse,
    SceneChanged,
    encode_request,
    parse_incoming,
)
from .methods import (
    ALLOWED_METHODS,
    EDITOR_METHODS,
)
from .reply import RpcReply
from .settings_rules import (
    DENIED_PREFIXES,
    SettingRuleError,
)

__all__ = [
    "ALLOWED_METHODS",
    "DENIED_PREFIXES",
    "EDITOR_METHODS",
    "LineSplitter",
    "MalformedMessageError",
    "OversizedLine",
    "PlayError",
    "RpcReply",
    "RpcResponse",
    "SceneChanged",
    "SettingRuleError",
    "encode_request",
    "hygiene_problem",
    "parse_incoming",
    "timeout_ms",
]
