// The connection indicator in the top bar.

export class StatusIndicator {
  constructor(element, textElement) {
    this._element = element;
    this._text = textElement;
    // The countdown ticks twice a second; keep it out of the live region so it is not read out.
    this._countdown = document.createElement("span");
    this._countdown.className = "status-countdown";
    this._countdown.setAttribute("aria-hidden", "true");
    element.append(this._countdown);
    this._timer = null;
  }

  connecting() {
    this._set("connecting", "Connecting…");
  }

  online() {
    this._set("online", "Connected");
  }

  /** Lost the server; show when the next try is. */
  offline(retryInMs) {
    const wasOffline = this._element.dataset.state === "offline";
    this._set("offline", "Connection lost, reconnecting…", wasOffline);
    const due = Date.now() + retryInMs;
    const show = () => {
      const seconds = Math.max(0, Math.ceil((due - Date.now()) / 1000));
      this._countdown.textContent = seconds > 0 ? ` (next try in ${seconds} s)` : "";
    };
    show();
    this._timer = setInterval(show, 500);
  }

  _set(state, words, keepText = false) {
    clearInterval(this._timer);
    this._timer = null;
    this._countdown.textContent = "";
    this._element.dataset.state = state;
    if (!keepText) this._text.textContent = words;
  }
}
