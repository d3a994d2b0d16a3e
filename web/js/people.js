// The people list: one numbered button per NPC at the player's location (the keyboard path).

import { moodCss } from "./moods.js";

export class PeopleList {
  constructor({ list, empty, elsewhere }, onChoose) {
    this._list = list;
    this._empty = empty;
    this._elsewhere = elsewhere;
    this._onChoose = onChoose;
    this._buttons = new Map();
    this._enabled = false;
    this._activeId = null;
  }

  /** Show `present` (`[{id, name, number}]`) as buttons and name those `elsewhere`. */
  update(present, elsewhere) {
    this._buttons.clear();
    const items = present.map((npc) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "person";
      button.dataset.npcId = npc.id;
      button.dataset.testid = `npc-button-${npc.id}`;
      button.dataset.mood = "neutral";
      button.style.setProperty("--mood", moodCss(null));
      const number = document.createElement("kbd");
      number.textContent = String(npc.number);
      button.append(number, document.createTextNode(` ${npc.name}`));
      button.addEventListener("click", () => this._onChoose(npc.id));
      this._buttons.set(npc.id, button);
      const item = document.createElement("li");
      item.append(button);
      return item;
    });
    this._list.replaceChildren(...items);
    this._empty.hidden = present.length > 0;
    this._elsewhere.hidden = elsewhere.length === 0;
    this._elsewhere.textContent = elsewhere.length
      ? `Elsewhere: ${elsewhere.map((npc) => (npc.place ? `${npc.name} (${npc.place})` : npc.name)).join(", ")}.`
      : "";
    this._refresh();
  }

  setEnabled(enabled) {
    this._enabled = enabled;
    this._refresh();
  }

  setActive(npcId) {
    this._activeId = npcId;
    this._refresh();
  }

  setMood(npcId, mood) {
    const button = this._buttons.get(npcId);
    if (!button) return;
    button.dataset.mood = mood;
    button.style.setProperty("--mood", moodCss(mood));
  }

  _refresh() {
    for (const [id, button] of this._buttons) {
      button.disabled = !this._enabled;
      button.setAttribute("aria-pressed", String(id === this._activeId));
    }
  }
}
