"""Omega station's offline brain: plays the NPCs from the request alone, without a model.

It reads what a model would read (system prompt, scene, history, tool results) and answers
with the same tool calls a model would make. It never touches the world store.
"""

from .options import Choice, Option, decode, trade_id
from .respond import respond
from .scene import Deal, IntelOffer, Job, Passage, SceneView, Ware, is_scene, parse_scene
from .tools import KNOWN_TOOLS, SPEAK

__all__ = [
    "KNOWN_TOOLS",
    "SPEAK",
    "Choice",
    "Deal",
    "IntelOffer",
    "Job",
    "Option",
    "Passage",
    "SceneView",
    "Ware",
    "decode",
    "is_scene",
    "parse_scene",
    "respond",
    "trade_id",
]
