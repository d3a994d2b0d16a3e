"""Compaction settings: thresholds (per provider too), prune and summary options."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, model_validator


class ProviderThresholds(BaseModel):
    """Overrides for one provider (by its registration name)."""

    model_config = ConfigDict(extra="forbid")

    provider: str
    context_window: int | None = Field(default=None, ge=256)
    threshold_ratio: float | None = Field(default=None, gt=0, le=1)
    retain_ratio: float | None = Field(default=None, gt=0, lt=1)


class PruneConfig(BaseModel):
    """The free strategy: long tool results outside the retained tail keep a head and tail."""

    model_config = ConfigDict(extra="forbid")

    threshold_chars: int = Field(default=8_192, ge=64)
    head_chars: int = Field(default=4_096, ge=0)
    tail_chars: int = Field(default=1_024, ge=0)


class CompactionConfig(BaseModel):
    """When to compact and how much to keep."""

    model_config = ConfigDict(extra="forbid")

    auto: bool = True
    """Compact on token pressure before a step (the overflow trigger is always on)."""
    threshold_ratio: float = Field(default=0.8, gt=0, le=1)
    """Compact when the next request's estimated tokens reach this share of the window."""
    retain_ratio: float = Field(default=0.16, gt=0, lt=1)
    """The newest messages worth this share of the window are kept as they are."""
    context_window: int | None = Field(default=None, ge=256)
    """Window for providers whose profile declares none (and no override below names)."""
    providers: list[ProviderThresholds] = []
    prune: PruneConfig = PruneConfig()
    summarize: bool = True
    """After pruning, summarize the older span with the model when still over the threshold."""
    forget: bool = False
    """With `summarize` off: after pruning, the span before the retained tail leaves the view
    whole, with no model call (the log keeps it). For agents whose memory lives elsewhere, such
    as NPC encounters (the game's memories carry what mattered)."""
    summary_provider: str | None = None
    """Provider (and model) that writes summaries; null: the agent's own."""
    summary_model: str | None = None
    summary_max_tokens: int = Field(default=2_048, ge=16)
    summary_item_chars: int = Field(default=2_000, ge=100)
    """Characters of each message shown to the summarizer."""

    @model_validator(mode="after")
    def _one_strategy(self) -> Self:
        if self.summarize and self.forget:
            raise ValueError(
                "summarize and forget are two ways to shrink the same span: set summarize: false"
                " to forget it"
            )
        return self


@dataclass(frozen=True, slots=True)
class Limits:
    window: int | None
    threshold_ratio: float
    retain_ratio: float

    @property
    def threshold(self) -> int | None:
        return None if self.window is None else int(self.window * self.threshold_ratio)

    @property
    def retain(self) -> int | None:
        return None if self.window is None else int(self.window * self.retain_ratio)
