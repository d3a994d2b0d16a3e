"""Profiles: YAML plugin rows built from ordered bundles, edited by patches, started in order."""

from .dump import dump_profile, profile_tree
from .errors import PluginStartError, ProfileError
from .patches import Patch, merge_patch
from .plugins import ENTRY_POINT_GROUP, PluginNotFoundError, resolve_plugin
from .profile import (
    USER_PATCH_FILE,
    ResolvedProfile,
    ResolvedRow,
    available_profiles,
    load_profile,
)
from .runtime import Runtime, start
from .schema import InlineBundle, PatchRow, ProfileSpec, RowSpec

__all__ = [
    "ENTRY_POINT_GROUP",
    "USER_PATCH_FILE",
    "InlineBundle",
    "Patch",
    "PatchRow",
    "PluginNotFoundError",
    "PluginStartError",
    "ProfileError",
    "ProfileSpec",
    "ResolvedProfile",
    "ResolvedRow",
    "RowSpec",
    "Runtime",
    "available_profiles",
    "dump_profile",
    "load_profile",
    "merge_patch",
    "profile_tree",
    "resolve_plugin",
    "start",
]
