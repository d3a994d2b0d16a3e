"""The closed set of error codes a harness sends in `error` frames, and the parse error."""

from __future__ import annotations

from enum import StrEnum

from ...runtime.errors import StarHarnessError


class ErrorCode(StrEnum):
    """Every code an `error` frame can carry; clients may switch on it exhaustively."""

    BAD_FRAME = "bad_frame"
    BAD_OPTION = "bad_option"
    UNKNOWN_ENCOUNTER = "unknown_encounter"
    ENCOUNTER_EXISTS = "encounter_exists"
    BUSY = "busy"
    UNKNOWN_NPC = "unknown_npc"
    UNKNOWN_PLAYER = "unknown_player"
    NPC_UNAVAILABLE = "npc_unavailable"
    LLM_UNAVAILABLE = "llm_unavailable"
    UNAUTHORIZED = "unauthorized"
    FORBIDDEN = "forbidden"
    LIMIT = "limit"
    INTERNAL = "internal"

    @property
    def meaning(self) -> str:
        """One line saying what went wrong, as documented in docs/protocol.md."""
        return _MEANINGS[self]


_MEANINGS: dict[ErrorCode, str] = {
    ErrorCode.BAD_FRAME: (
        "The frame is not JSON, not an object, has a missing or unknown `t`, or an invalid field."
    ),
    ErrorCode.BAD_OPTION: "The `optionId` does not match an item of the last `options` frame.",
    ErrorCode.UNKNOWN_ENCOUNTER: "No open encounter has this id on this connection.",
    ErrorCode.ENCOUNTER_EXISTS: "An encounter with this id is already open on this connection, "
    "or the player is already in the shared scene the open joins.",
    ErrorCode.BUSY: "The encounter is still running a turn (the say was dropped), or the server "
    "is at capacity (the open was refused), or the world is out of reach for a moment (its "
    "database is down; nothing was done).",
    ErrorCode.UNKNOWN_NPC: "The game has no NPC with this id.",
    ErrorCode.UNKNOWN_PLAYER: "The game has no player with this id.",
    ErrorCode.NPC_UNAVAILABLE: "The NPC exists but cannot talk now (for example it is not alive).",
    ErrorCode.LLM_UNAVAILABLE: "The model could not be reached after retries; the turn ended.",
    ErrorCode.UNAUTHORIZED: "The request lacks the token or origin this server requires.",
    ErrorCode.FORBIDDEN: "The connection's credential does not allow this: acting for another "
    "player than the one it is bound to, or advancing the world clock.",
    ErrorCode.LIMIT: "A configured limit was exceeded (frame size, rate, text length, "
    "encounters, turn steps or time).",
    ErrorCode.INTERNAL: "An unexpected fault in the harness; the connection lives on.",
}

if set(_MEANINGS) != set(ErrorCode):  # pragma: no cover - guards edits to this module
    raise RuntimeError("every ErrorCode needs a meaning")


class FrameError(StarHarnessError):
    """A frame was refused; carries the code and a message naming what is wrong."""

    def __init__(self, code: ErrorCode, message: str, encounter_id: str | None = None) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.encounter_id = encounter_id
