"""Omega station's offline brain: plays the NPCs from the request alone, without a model.

It reads what a model would read (system prompt, scene, history, tool results) and answers
with the same tool calls a model would make. It never touches the world store.
"""

from .hooks import BrainHooks, Decide, React, Recognise, make_responder
from .intents import Intent
from .offers import standard_options, with_bye
from .options import Choice, Option, decode, trade_id
from .plans import Act, Plan, Say, Situation, act
from .respond import respond
from .scene import Deal, IntelOffer, Job, Passage, SceneView, Ware, is_scene, parse_scene
from .tools import KNOWN_TOOLS, SPEAK
from .transcript import Call

__all__ = [
    "KNOWN_TOOLS",
    "SPEAK",
    "Act",
    "BrainHooks",
    "Call",
    "Choice",
    "Deal",
    "Decide",
    "IntelOffer",
    "Intent",
    "Job",
    "Option",
    "Passage",
    "Plan",
    "React",
    "Recognise",
    "Say",
    "SceneView",
    "Situation",
    "Ware",
    "act",
    "decode",
    "is_scene",
    "make_responder",
    "parse_scene",
    "respond",
    "standard_options",
    "trade_id",
    "with_bye",
]
