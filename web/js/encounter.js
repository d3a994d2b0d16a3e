// One conversation at a time: opens, says and closes encounters, and routes their frames to the
// dialogue panel, the scene, the people list and the HUD.

import { friendlyError } from "./errors.js";

/** Reply ids that mean the player leaves: said, answered, then the encounter is closed. */
export const LEAVE_OPTION_IDS = Object.freeze(["bye", "leave"]);
/** How many ended encounters the page remembers, to recognise their late frames. */
const ENDED_KEPT = 8;

export class EncounterController {
  constructor({ send, playerId, dialogue, scene, people, hud }) {
    this._send = send;
    this._playerId = playerId;
    this._dialogue = dialogue;
    this._scene = scene;
    this._people = people;
    this._hud = hud;
    this._counter = 0;
    this.current = null;
    this._ended = [];
  }

  /** Walk up to `npc` (`{id, name}`); walking up to someone else first walks away. */
  open(npc) {
    if (this.current && this.current.npcId === npc.id) {
      this._dialogue.focusInput();
      return;
    }
    if (this.current) this.close();
    this._counter += 1;
    const id = `enc-${this._counter}`;
    if (!this._send({ t: "encounter.open", id, npcId: npc.id, playerId: this._playerId })) return;
    this.current = { id, npcId: npc.id, npcName: npc.name, opened: false };
    this._dialogue.open(npc.name);
    this._scene.setActive(npc.id);
    this._people.setActive(npc.id);
    this._hud.showAttitude(null);
  }

  /** Walk away: the harness cancels a running turn; what was said and done stays. */
  close(reason = "") {
    const current = this.current;
    if (!current) return;
    this._send({ t: "encounter.close", id: current.id });
    this._forget(reason);
  }

  sayOption(optionId, label) {
    if (!this.current) return;
    if (this._send({ t: "encounter.say", id: this.current.id, optionId })) {
      // Leaving: hear their farewell, then walk away (no reply of theirs can keep you there).
      this.current.leaving = LEAVE_OPTION_IDS.includes(optionId);
      this._dialogue.playerSaid(label);
      this._scene.setSpeaking(this.current.npcId);
    }
  }

  sayText(text) {
    if (!this.current) return;
    if (this._send({ t: "encounter.say", id: this.current.id, text })) {
      this._dialogue.playerSaid(text);
      this._scene.setSpeaking(this.current.npcId);
    }
  }

  /**
   * The NPC is no longer where the player is (the player travelled, or they did): the
   * conversation ends. A turn still running ends first, so its line is heard as a farewell;
   * its replies are not offered, since nobody is there to answer them.
   */
  npcGone() {
    const current = this.current;
    if (!current) return;
    current.leaving = true;
    current.gone = true;
    this._dialogue.setOptions([]);
    if (!this._dialogue.isBusy) this.close(`${current.npcName} is not here any more.`);
  }

  /** The socket dropped: the harness closed every encounter of this connection. */
  connectionLost() {
    if (this.current) this._forget("The connection dropped, so the conversation ended. Walk up again once it is back.");
  }

  /** Handle an encounter frame; false when the frame is not about an encounter. */
  handle(frame) {
    switch (frame.t) {
      case "encounter.opened":
        return this._ifCurrent(frame, (current) => {
          current.opened = true;
          current.npcName = frame.npcName || current.npcName;
          this._dialogue.setNpcName(current.npcName);
          this._hud.showAttitude(current.npcName, frame.attitude, current.npcId);
          this._scene.setSpeaking(current.npcId);
        });
      case "say.delta":
        return this._ifCurrent(frame, () => this._dialogue.appendLine(frame.text));
      case "say.end":
        return this._ifCurrent(frame, (current) => {
          this._dialogue.endLine(frame.mood);
          this._scene.setMood(current.npcId, frame.mood);
          this._people.setMood(current.npcId, frame.mood);
        });
      case "options":
        // Replies to someone you are leaving (or who is gone) are never offered.
        return this._ifCurrent(frame, (current) => {
          if (!current.leaving) this._dialogue.setOptions(frame.items);
        });
      case "action":
        return this._ifCurrent(frame, () => this._dialogue.addAction(frame.name, frame.ok, frame.summary));
      case "encounter.closed":
        // The harness ended it (the player left the place): nothing to send back. Any field
        // beyond `id` is not words for the player, so the panel keeps their last line.
        return this._ifCurrent(frame, (current) => {
          current.gone = true;
          this._forget(this._farewell(current));
        });
      case "encounter.idle":
        return this._ifCurrent(frame, (current) => {
          if (current.leaving) {
            this.close(this._farewell(current));
            return;
          }
          this._scene.setSpeaking(null);
          this._dialogue.setBusy(false);
          this._dialogue.focusInput();
        });
      default:
        return false;
    }
  }

  /**
   * Whether `frame` only says an encounter the page already left is gone (the harness ended
   * it first, as when the player travels): expected, nothing to tell the player.
   */
  isStale(frame) {
    return frame.code === "unknown_encounter" && this._ended.includes(frame.id);
  }

  /** An `error` frame about the current encounter; true when it was one. */
  handleError(frame) {
    const current = this.current;
    if (!current || frame.id !== current.id) return false;
    if (!current.opened || frame.code === "unknown_encounter") {
      // The encounter never opened or is gone: nothing to keep talking to.
      this._forget(friendlyError(frame.code, frame.message));
      return true;
    }
    if (frame.code !== "busy") {
      // A refused say starts no turn, so no encounter.idle will come to re-enable input.
      this._scene.setSpeaking(null);
      this._dialogue.setBusy(false);
    }
    return true;
  }

  /** What stays on the panel when a conversation ends: their last line, or why it ended. */
  _farewell(current) {
    const farewell = this._dialogue.lineText.trim();
    if (farewell) return `${current.npcName}: “${farewell}”`;
    return current.gone ? `${current.npcName} is not here any more.` : "";
  }

  _ifCurrent(frame, act) {
    if (this.current && frame.id === this.current.id) act(this.current);
    // Frames of an encounter we already walked away from are expected and ignored.
    return true;
  }

  _forget(reason) {
    this._ended = [...this._ended.slice(-(ENDED_KEPT - 1)), this.current.id];
    this.current = null;
    this._dialogue.close(reason);
    this._scene.setActive(null);
    this._scene.setSpeaking(null);
    this._people.setActive(null);
    this._hud.showAttitude(null);
  }
}
