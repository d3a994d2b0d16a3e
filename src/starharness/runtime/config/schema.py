"""The shapes of profile, bundle and patch files (validated with pydantic at the boundary)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

_ROW_ID = r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*$"


class RowSpec(BaseModel):
    """One plugin row: a unique id, the plugin to load and its config."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=_ROW_ID)
    plugin: str = Field(min_length=1)
    config: dict[str, Any] = Field(default_factory=dict[str, Any])


class InlineBundle(BaseModel):
    """A bundle written inside a profile file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    rows: list[RowSpec]


class ProfileSpec(BaseModel):
    """A profile file: bundles applied in order (a name refers to `bundles/<name>.yml`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str = ""
    bundles: list[str | InlineBundle] = Field(min_length=1)


class PatchRow(BaseModel):
    """One patch row, matched by `id`.

    On an existing row: `config` replaces the whole config, `merge` applies a JSON merge patch
    (RFC 7386: mappings merge recursively, `null` deletes a key), `plugin` swaps the plugin and
    `remove: true` drops the row. On an unknown id the row is added (it needs `plugin`), at the
    end or `after`/`before` another row. `profiles` limits the row to the named profiles.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=_ROW_ID)
    plugin: str | None = Field(default=None, min_length=1)
    config: dict[str, Any] | None = None
    merge: dict[str, Any] | None = None
    remove: bool = False
    after: str | None = None
    before: str | None = None
    profiles: list[str] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> PatchRow:
        if self.config is not None and self.merge is not None:
            raise ValueError("give either 'config' (replace) or 'merge' (merge patch), not both")
        if self.after is not None and self.before is not None:
            raise ValueError("give either 'after' or 'before', not both")
        changes = self.plugin is not None or self.config is not None or self.merge is not None
        if self.remove and (changes or self.after is not None or self.before is not None):
            raise ValueError("a 'remove: true' row takes no other change")
        return self
