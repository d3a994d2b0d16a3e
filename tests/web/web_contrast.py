"""WCAG contrast: measuring every piece of text on a page, and the ratio arithmetic."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

AA_NORMAL = 4.5
AA_LARGE = 3.0

# For each visible element with its own text: its colour, the colour behind it (semi-transparent
# layers composited over the first opaque ancestor), and whether the text counts as large.
CONTRAST_JS = """
() => {
  const parse = (css) => {
    const m = css.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return [0, 0, 0, 0];
    const p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, bottom) => {
    const a = top[3];
    return [0, 1, 2].map((i) => top[i] * a + bottom[i] * (1 - a)).concat(1);
  };
  const behind = (el) => {
    const layers = [];
    for (let node = el; node; node = node.parentElement) {
      const colour = parse(getComputedStyle(node).backgroundColor);
      if (colour[3] > 0) layers.push(colour);
      if (colour[3] >= 1) break;
    }
    let result = [0, 0, 0, 1];
    for (const layer of layers.reverse()) result = over(layer, result);
    return result;
  };
  const out = [];
  for (const el of document.body.querySelectorAll("*")) {
    const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.data.trim());
    if (!own || el.closest("[hidden], .visually-hidden, button:disabled, input:disabled")) continue;
    const box = el.getBoundingClientRect();
    const style = getComputedStyle(el);
    if (!box.width || !box.height || style.visibility === "hidden") continue;
    const size = parseFloat(style.fontSize);
    const bold = Number(style.fontWeight) >= 700;
    out.push({
      text: el.textContent.trim().slice(0, 40),
      fg: over(parse(style.color), behind(el)),
      bg: behind(el),
      large: size >= 24 || (bold && size >= 18.66),
    });
  }
  const input = document.querySelector("#say-text");
  if (input && !input.disabled) {
    const style = getComputedStyle(input, "::placeholder");
    out.push({ text: "placeholder", fg: parse(style.color), bg: behind(input), large: false });
  }
  return out;
}
"""


def _luminance(rgb: Sequence[float]) -> float:
    def channel(value: float) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(v) for v in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(fg: Sequence[float], bg: Sequence[float]) -> float:
    light, dark = sorted((_luminance(fg), _luminance(bg)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def failures(samples: list[dict[str, Any]]) -> list[str]:
    found: list[str] = []
    for sample in samples:
        ratio = contrast(sample["fg"], sample["bg"])
        floor = AA_LARGE if sample["large"] else AA_NORMAL
        if ratio < floor:
            found.append(f"{sample['text']!r}: {ratio:.2f} < {floor}")
    return found
