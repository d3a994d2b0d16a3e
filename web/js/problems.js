// Problems shown to the player: error frames in plain words, newest last, each dismissable.

import { errorDetail, friendlyError } from "./errors.js";

const KEEP = 3;

export class ProblemList {
  constructor(container) {
    this._container = container;
  }

  /** Show an `error` frame's code and message as a sentence (the message small, for details). */
  showError(code, message) {
    this.show(friendlyError(code, message), errorDetail(code, message), code);
  }

  /** Show a sentence of our own (for example, a lost connection). */
  show(sentence, detail = "", code = "client") {
    // The same problem again replaces its card (with a count) instead of stacking a twin.
    const twin = [...this._container.children].find(
      (card) => card.dataset.code === code && card.dataset.sentence === sentence && card.dataset.detail === detail,
    );
    const times = twin ? Number(twin.dataset.times) + 1 : 1;
    twin?.remove();
    const card = document.createElement("div");
    card.dataset.sentence = sentence;
    card.dataset.detail = detail;
    card.dataset.times = String(times);
    card.className = "problem";
    card.dataset.testid = "problem";
    card.dataset.code = code;
    const text = document.createElement("p");
    text.className = "problem-text";
    text.textContent = times > 1 ? `${sentence} (${times}×)` : sentence;
    card.append(text);
    if (detail) {
      const small = document.createElement("p");
      small.className = "problem-detail";
      small.textContent = `Details: ${detail}`;
      card.append(small);
    }
    const dismiss = document.createElement("button");
    dismiss.type = "button";
    dismiss.className = "problem-dismiss";
    dismiss.setAttribute("aria-label", "Dismiss");
    dismiss.textContent = "×";
    dismiss.addEventListener("click", () => card.remove());
    card.append(dismiss);
    this._container.append(card);
    while (this._container.children.length > KEEP) this._container.firstElementChild.remove();
  }

  clear() {
    this._container.replaceChildren();
  }
}
