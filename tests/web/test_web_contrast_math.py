"""The contrast arithmetic the browser test relies on, checked against known values."""

from __future__ import annotations

from web_contrast import contrast, failures


def test_the_contrast_check_can_fail() -> None:
    # Well-known reference values: #777 on white is 4.48:1 (fails AA), #767676 is 4.54:1.
    white = [255, 255, 255, 1]
    too_light = {"text": "x", "fg": [119, 119, 119, 1], "bg": white, "large": False}
    just_dark_enough = {"text": "y", "fg": [118, 118, 118, 1], "bg": white, "large": False}
    large_heading = {"text": "z", "fg": [119, 119, 119, 1], "bg": white, "large": True}
    assert failures([too_light, just_dark_enough, large_heading]) == ["'x': 4.48 < 4.5"]
    assert round(contrast([0, 0, 0], white), 2) == 21.0
