"""runtime/codemode: run_code, a model-written program that calls host tools from the sandbox."""

from .calls import NOT_ALLOWED, CodeCall
from .keys import CODE_CALL, CODE_DONE, CODE_RESULT, CODE_RUN
from .plugin import CodeModeConfig, CodeModePlugin, interpreter
from .program import CodeRun
from .settings import NEVER_CALLABLE, RUN_CODE, CodeModeSettings
from .tool import run_code_tool

__all__ = [
    "CODE_CALL",
    "CODE_DONE",
    "CODE_RESULT",
    "CODE_RUN",
    "NEVER_CALLABLE",
    "NOT_ALLOWED",
    "RUN_CODE",
    "CodeCall",
    "CodeModeConfig",
    "CodeModePlugin",
    "CodeModeSettings",
    "CodeRun",
    "interpreter",
    "run_code_tool",
]
