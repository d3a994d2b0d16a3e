"""The world's database as the server sees it: up, or out of reach since when; players hear a
plain refusal while it is out, the log one line per kind of failure, and a probe notices the
recovery (then every HUD here is pushed again)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable

import psycopg

from ...runtime.session import StoreUnreachableError
from ..frames import ErrorCode, FrameError
from .log_limit import LogLimiter

OUTAGE_CODE = ErrorCode.BUSY
"""The closed set's code for "not now, nothing was done, retry shortly": every client already
handles it (a code of its own would break clients that switch on the set exhaustively)."""
OUTAGE_MESSAGE = (
    "the world is out of reach for a moment (its records can be neither read nor written); "
    "nothing happened: try again shortly"
)
OUTAGE_LOGGERS = (
    "starharness.npc.server",
    "starharness.npc.encounter",
    "starharness.npc.actions",
    "starharness.npc.residents",
)
"""The loggers whose tracebacks an outage would multiply (one per frame, turn or HUD read)."""
_PROBE_TIMEOUT_S = 5.0
_PROBE_PAUSES_S = (0.1, 0.25, 0.5, 1.0)


def is_outage(error: BaseException) -> bool:
    """Whether `error` says a database is out of reach (down, restarting, a broken link), as
    opposed to a fault of the game or of the harness."""
    return isinstance(error, StoreUnreachableError | psycopg.OperationalError)


def outage_error(encounter_id: str | None = None) -> FrameError:
    """What a player hears while the world's database is out of reach."""
    return FrameError(OUTAGE_CODE, OUTAGE_MESSAGE, encounter_id)


class WorldWatch:
    """Whether the world's database answers; while it does not, a probe task (owned here,
    cancelled by `aclose`) asks it again until it does."""

    def __init__(
        self,
        probe: Callable[[], Awaitable[object]],
        back: Callable[[], None],
        logger: logging.Logger,
    ) -> None:
        self._probe = probe
        self._back = back
        self._log = logger
        self._limiter = LogLimiter(logger)
        self._down_since: float | None = None
        self._task: asyncio.Task[None] | None = None
        self._decided = asyncio.Event()
        """Clear while a probe started on suspicion has not answered yet."""
        self._decided.set()

    @property
    def down(self) -> bool:
        return self._down_since is not None

    @property
    def deciding(self) -> bool:
        """A probe started on suspicion (the bus's link dropped) has not answered yet."""
        return not self._decided.is_set()

    async def decided(self) -> None:
        """Until the deciding probe answered (at most its timeout): a frame arriving just as
        the database went away hears the outage, not the failure of its own first try."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._decided.wait(), _PROBE_TIMEOUT_S)

    def refuse_if_down(self, encounter_id: str | None = None) -> None:
        """Raise the outage's FrameError while the world is out of reach."""
        if self._down_since is not None:
            raise outage_error(encounter_id)

    def failed(self, error: BaseException, doing: str) -> None:
        """A world call failed because its database is out of reach: log it (a line per kind
        per interval, never a traceback) and watch for the recovery."""
        if self._down_since is None:
            self._down_since = time.monotonic()
        # The cause names the host and user: the log's, never a player's.
        self._limiter.log(
            logging.WARNING,
            f"world-down:{type(error).__name__}",
            "the world database is out of reach (%s): %s: %s",
            doing,
            type(error).__name__,
            str(error).strip().replace("\n", " ")[:300],
        )
        self._watch()

    def found(self) -> None:
        """An outage surfaced where it is logged already (a turn's failure): refuse from now
        on and watch for the recovery, without another log line."""
        if self._down_since is None:
            self._down_since = time.monotonic()
        self._watch()

    def suspect(self) -> None:
        """Something else on the database failed (the fan-out's link): ask the world now, so
        players hear the outage before their own frame finds it."""
        if self._down_since is None and self._task is None:
            self._decided.clear()
        self._watch()

    def not_ready(self) -> str | None:
        since = self._down_since
        if since is None:
            return None
        return (
            f"the world database is out of reach (for {time.monotonic() - since:.0f} s;"
            " see the server log)"
        )

    def _watch(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(
                self._until_back(), name="npc world watch"
            )

    async def _until_back(self) -> None:
        try:
            tries = 0
            while True:
                try:
                    await asyncio.wait_for(self._probe(), _PROBE_TIMEOUT_S)
                except Exception as exc:
                    if not (is_outage(exc) or isinstance(exc, TimeoutError)):
                        # Not an outage (the world was closed, a bug): readiness says so itself.
                        self._log.warning("world watch: the probe failed: %r", exc)
                        return
                    self.failed(exc, "probe")
                    self._decided.set()
                    await asyncio.sleep(_PROBE_PAUSES_S[min(tries, len(_PROBE_PAUSES_S) - 1)])
                    tries += 1
                    continue
                since, self._down_since = self._down_since, None
                if since is not None:
                    self._limiter.flush()
                    self._log.warning(
                        "the world database answers again (out of reach for %.1f s)",
                        time.monotonic() - since,
                    )
                    # HUD reads failed meanwhile (and were skipped): show every player again.
                    self._back()
                return
        finally:
            self._task = None
            self._decided.set()

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)


class OutageRecords(logging.Filter):
    """A filter for the loggers in OUTAGE_LOGGERS: a record carrying a database outage's
    exception (an encounter's turn that could not read its scene, say) becomes one line, no
    traceback, once per logger and kind per interval; and the watch looks at the world."""

    def __init__(self, watch: WorldWatch, logger: logging.Logger) -> None:
        super().__init__()
        self._watch = watch
        self._limiter = LogLimiter(logger)

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if error is None or not is_outage(error):
            return True
        # (Several servers in one process each filter: another's record trips this watch too,
        # until its first probe answers, a few milliseconds.)
        with contextlib.suppress(RuntimeError):  # off the loop (a world thread): nothing to do
            asyncio.get_running_loop()
            self._watch.found()
        suppressed = self._limiter.admit(f"{record.name}:{type(error).__name__}")
        if suppressed is None:
            return False
        cause = str(error).strip().replace("\n", " ")[:300]
        more = f" (and {suppressed} more like it)" if suppressed else ""
        record.msg = f"{record.getMessage()}: {type(error).__name__}: {cause}{more}"
        record.args = None
        record.exc_info = None
        record.exc_text = None
        return True

    def install(self) -> None:
        for name in OUTAGE_LOGGERS:
            logging.getLogger(name).addFilter(self)

    def uninstall(self) -> None:
        self._limiter.flush()
        for name in OUTAGE_LOGGERS:
            logging.getLogger(name).removeFilter(self)
