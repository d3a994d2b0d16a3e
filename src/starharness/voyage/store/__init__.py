"""The world store: a SQLite file or a PostgreSQL database, typed reads, and writes only inside
transactions."""

from .clock import MAX_DAYS_PER_TICK, ClockRules
from .errors import (
    InsufficientCargoError,
    InsufficientCreditsError,
    InsufficientError,
    InsufficientStockError,
    SchemaVersionError,
    TransactionStateError,
    UnknownEntityError,
    WorldBusyError,
    WorldConflictError,
    WorldError,
)
from .gossip import spread_gossip
from .memory import MemoryBudget, summarise_memories
from .pg_conn import DEFAULT_POOL_SIZE
from .pg_schema import APPLICATION
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
from .schema_text import APPLICATION_ID, SCHEMA_VERSION
from .social import SocialRules
from .transaction import ATTITUDE_MAX, ATTITUDE_MIN, WorldTx
from .world import VoyageWorld, open_server_world, open_world, seed_server_world, seed_world

__all__ = [
    "APPLICATION",
    "APPLICATION_ID",
    "ATTITUDE_MAX",
    "ATTITUDE_MIN",
    "DEFAULT_POOL_SIZE",
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
    "SocialRules",
    "TradeLine",
    "TransactionStateError",
    "UnknownEntityError",
    "VoyageWorld",
    "WorldBusyError",
    "WorldConflictError",
    "WorldError",
    "WorldReader",
    "WorldTx",
    "attitude_word",
    "estimate_tokens",
    "open_server_world",
    "open_world",
    "seed_server_world",
    "seed_world",
    "spread_gossip",
    "summarise_memories",
]
