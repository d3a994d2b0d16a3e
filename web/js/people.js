// The people list: one numbered button per NPC at the player's location (the keyboard path),
// and, where two or more stand, one to talk to them together (a scene).

import { moodCss } from "./moods.js";

/** The most NPCs one scene holds (the frame protocol's bound). */
export const MAX_SCENE_NPCS = 4;

export class PeopleList {
  constructor({ list, empty, elsewhere, group = null }, onChoose, onGroup = () => {}) {
    this._list = list;
    this._empty = empty;
    this._elsewhere = elsewhere;
    this._group = group;
    this._onChoose = onChoose;
    this._onGroup = onGroup;
    this._buttons = new Map();
    this._enabled = false;
    this._activeId = null;
    this._groupActive = false;
    this._present = 0;
    group?.addEventListener("click", () => this._onGroup());
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
    this._present = present.length;
    if (this._group) {
      const together = Math.min(present.length, MAX_SCENE_NPCS);
      this._group.hidden = together < 2;
      this._group.textContent = together === present.length ? "Talk to everyone here" : `Talk to the first ${together} here`;
    }
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

  /** Who is talked to: one NPC's id, or `group` for everyone here together. */
  setActive(npcId, group = false) {
    this._activeId = npcId;
    this._groupActive = group;
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
      button.setAttribute("aria-pressed", String(!this._groupActive && id === this._activeId));
    }
    if (this._group) {
      this._group.disabled = !this._enabled;
      this._group.setAttribute("aria-pressed", String(this._groupActive));
    }
  }
}
