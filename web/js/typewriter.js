// Types streamed text out at a readable pace, catching up when the stream runs ahead.

const TICK_MS = 30;
const MIN_CHARS_PER_TICK = 2;
const CATCH_UP_TICKS = 20;

export class Typewriter {
  constructor(element, onDrained = () => {}) {
    this._element = element;
    this._onDrained = onDrained;
    this._node = document.createTextNode("");
    this._element.replaceChildren(this._node);
    this._pending = "";
    this._timer = null;
    this._instant = window.matchMedia?.("(prefers-reduced-motion: reduce)").matches ?? false;
  }

  /** Everything received so far, typed out or not. */
  get text() {
    return this._node.data + this._pending;
  }

  /** Whether text is still waiting to be shown. */
  get typing() {
    return this._pending.length > 0;
  }

  clear() {
    this._stop();
    this._pending = "";
    this._node.data = "";
  }

  push(text) {
    if (this._instant) {
      this._node.data += text;
      this._onDrained();
      return;
    }
    this._pending += text;
    if (this._timer === null) this._timer = setInterval(() => this._tick(), TICK_MS);
  }

  /** Show whatever is still pending at once. */
  flush() {
    this._stop();
    this._node.data += this._pending;
    this._pending = "";
    this._onDrained();
  }

  _tick() {
    // A long backlog is typed faster so the line never lags the stream by more than ~0.6 s.
    const step = Math.max(MIN_CHARS_PER_TICK, Math.ceil(this._pending.length / CATCH_UP_TICKS));
    const [shown, rest] = splitAt(this._pending, step);
    this._node.data += shown;
    this._pending = rest;
    if (!this._pending) {
      this._stop();
      this._onDrained();
    }
  }

  _stop() {
    clearInterval(this._timer);
    this._timer = null;
  }
}

// Split by code points so a surrogate pair (an emoji) is never shown half-typed.
function splitAt(text, count) {
  const chars = Array.from(text);
  return [chars.slice(0, count).join(""), chars.slice(count).join("")];
}
