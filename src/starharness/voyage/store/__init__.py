"""The world store: one SQLite file, typed reads, and writes only inside transactions."""

from .clock import MAX_DAYS_PER_TICK, ClockRules
from .connection import APPLICATION_ID, SCHEMA_VERSION
from .errors import (
    InsufficientCargoError,
    InsufficientCreditsError,
    InsufficientError,
    InsufficientStockError,
    SchemaVersionError,
    TransactionStateError,
    UnknownEntityError,
    WorldBusyError,
    WorldError,
)
from .memory import MemoryBudget, summarise_memories
from .reader import WorldReader
from .rows import (
    Actor,
    AuditEntry,
    Good,
    Intel,
    Location,
    MarketQuote,
    Memory,
    NewsItem,
    Quest,
    Route,
    TradeLine,
)
from .scene import attitude_word, estimate_tokens
from .transaction import ATTITUDE_MAX, ATTITUDE_MIN, WorldTx
from .world import VoyageWorld, open_world, seed_world

__all__ = [
    "APPLICATION_ID",
    "ATTITUDE_MAX",
    "ATTITUDE_MIN",
    "MAX_DAYS_PER_TICK",
    "SCHEMA_VERSION",
    "Actor",
    "AuditEntry",
    "ClockRules",
    "Good",
    "InsufficientCargoError",
    "InsufficientCreditsError",
    "InsufficientError",
    "InsufficientStockError",
    "Intel",
    "Location",
    "MarketQuote",
    "Memory",
    "MemoryBudget",
    "NewsItem",
    "Quest",
    "Route",
    "SchemaVersionError",
    "TradeLine",
    "TransactionStateError",
    "UnknownEntityError",
    "VoyageWorld",
    "WorldBusyError",
    "WorldError",
    "WorldReader",
    "WorldTx",
    "attitude_word",
    "estimate_tokens",
    "open_world",
    "seed_world",
    "summarise_memories",
]
