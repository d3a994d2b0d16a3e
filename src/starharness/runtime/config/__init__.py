"""Profiles: YAML plugin rows built from ordered bundles, edited by patches, started in order."""

from .dump import dump_profile, profile_tree
from .errors import PluginStartError, ProfileError
from .patches import Patch, merge_patch
from .plugins import (
    PluginNotFoundError,
)
from .profile import (
    ResolvedProfile,
    available_profiles,
    load_profile,
)
from .runtime import Runtime, start
from .schema import (
    ProfileSpec,
)

__all__ = [
    "Patch",
    "PluginNotFoundError",
    "PluginStartError",
    "ProfileError",
    "ProfileSpec",
    "ResolvedProfile",
    "Runtime",
    "available_profiles",
    "dump_profile",
    "load_profile",
    "merge_patch",
    "profile_tree",
    "start",
]
