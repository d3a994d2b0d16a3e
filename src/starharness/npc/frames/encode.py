"""Serialising frames for the wire."""

from __future__ import annotations

from .base import WireModel


def encode(frame: WireModel) -> str:
    """Compact JSON text of a frame with wire names; unset optional fields are left out."""
    return frame.__pydantic_serializer__.to_json(frame).decode()
