// One conversation at a time: opens, says and closes encounters, and routes their frames to the
// dialogue panel, the scene, the people list and the HUD. A conversation is with one NPC, or a
// scene with several (`npcIds`), whose frames name their speaker (`speakerId`). On a harness of
// revision 3 a scene is shared: other players at the place who talk to the same people are in
// it too, and their lines arrive with their `speakerId` and `speakerName`; `scene.players`
// says who comes and goes.

import { friendlyError } from "./errors.js";

/** Reply ids that mean the player leaves: said, answered, then the encounter is closed. */
export const LEAVE_OPTION_IDS = Object.freeze(["bye", "leave"]);
/** How many ended encounters the page remembers, to recognise their late frames. */
const ENDED_KEPT = 8;
/** The protocol revision whose scenes several players share (`encounter.open` with `join`). */
export const SHARED_SCENES_REVISION = 3;

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
    this._revision = 1;
  }

  /** The harness's protocol revision (`welcome.revision`; absent: 1). */
  setRevision(revision) {
    this._revision = Number.isInteger(revision) && revision > 0 ? revision : 1;
  }

  /** Walk up to `npc` (`{id, name}`); walking up to someone else first walks away. In a
   * scene, walking up to one of its NPCs turns to them instead. */
  open(npc) {
    if (this.current && this.current.npcId === npc.id && !this.current.members) {
      this._dialogue.focusInput();
      return;
    }
    if (this.current?.members?.some((member) => member.id === npc.id)) {
      this.address(npc.id);
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

  /** Walk up to several NPCs at once (`[{id, name}]`, 2 to 4): one scene, the first greets.
   * On a harness of revision 3 the scene is shared: the player joins the one other players
   * here already have with these NPCs (no greeting then), or opens it for them to join. */
  openScene(npcs) {
    const members = npcs.map((npc) => ({ id: npc.id, name: npc.name, attitude: null }));
    if (this.current?.members && sameIds(this.current.members, members)) {
      this._dialogue.focusInput();
      return;
    }
    if (this.current) this.close();
    this._counter += 1;
    const id = `enc-${this._counter}`;
    const first = members[0];
    const frame = { t: "encounter.open", id, npcId: first.id, npcIds: members.map((m) => m.id), playerId: this._playerId };
    if (this._revision >= SHARED_SCENES_REVISION) frame.join = true;
    if (!this._send(frame)) return;
    const npcName = members.map((m) => m.name).join(" & ");
    this.current = { id, npcId: first.id, npcName, members, to: null, speaker: first.id, opened: false };
    this._dialogue.open(npcName);
    this._dialogue.setScene(members);
    this._scene.setActive(first.id);
    this._people.setActive(first.id, true);
    this._hud.showAttitude(null);
  }

  /** In a scene: whom the player's typed words go to (an NPC's id; null: everyone, and the
   * harness's rule picks who answers). */
  address(npcId) {
    const current = this.current;
    if (!current?.members) return;
    current.to = current.members.some((member) => member.id === npcId) ? npcId : null;
    this._dialogue.setAddressee(current.to);
    if (current.to) this._scene.setActive(current.to);
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
      // In a scene a reply goes to the NPC whose replies they were.
      const to = this.current.members ? this.current.optionsFrom : null;
      this._dialogue.playerSaid(label, to);
      this._turnStarts(this.current, to);
    }
  }

  sayText(text) {
    const current = this.current;
    if (!current) return;
    const frame = { t: "encounter.say", id: current.id, text };
    if (current.members && current.to) frame.to = current.to;
    if (this._send(frame)) {
      this._dialogue.playerSaid(text, current.members ? current.to : null);
      this._turnStarts(current, current.to);
    }
  }

  /** The player spoke: the NPC spoken to turns to speak (in a scene, whoever answers first
   * shows once their first words arrive). */
  _turnStarts(current, to) {
    if (!current.members) {
      this._scene.setSpeaking(current.npcId);
      return;
    }
    current.speaker = null;
    this._scene.setSpeaking(to);
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
          if (current.members && Array.isArray(frame.npcs)) {
            for (const member of current.members) {
              const told = frame.npcs.find((npc) => npc.id === member.id);
              if (told) Object.assign(member, { name: told.name || member.name, attitude: told.attitude });
            }
            this._dialogue.setScene(current.members);
            this._dialogue.setAddressee(current.to);
          } else {
            current.npcName = frame.npcName || current.npcName;
            this._dialogue.setNpcName(current.npcName);
          }
          this._showSpeaker(current, frame.speakerId, frame.attitude);
        });
      case "say.delta":
        return this._ifCurrent(frame, (current) => {
          if (this._isOtherPlayer(current, frame.speakerId)) {
            // Another player of a shared scene: their round begins, and it is not ours to speak.
            this._scene.setSpeaking(null);
            this._dialogue.otherSaid(frame.speakerId, otherName(frame), frame.text);
            return;
          }
          const speaker = this._showSpeaker(current, frame.speakerId);
          this._dialogue.appendLine(frame.text, current.members ? speaker : null);
        });
      case "say.end":
        return this._ifCurrent(frame, (current) => {
          // Another player's line has no mood for any NPC here.
          if (this._isOtherPlayer(current, frame.speakerId)) return;
          const speaker = this._speakerOf(current, frame.speakerId);
          this._dialogue.endLine(frame.mood);
          this._scene.setMood(speaker, frame.mood);
          this._people.setMood(speaker, frame.mood);
        });
      case "options":
        // Replies to someone you are leaving (or who is gone) are never offered.
        return this._ifCurrent(frame, (current) => {
          current.optionsFrom = this._speakerOf(current, frame.speakerId);
          if (!current.leaving) this._dialogue.setOptions(frame.items, current.optionsFrom);
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
      case "scene.players":
        // Who is in a shared scene now: on joining, who was here first; then who comes and goes.
        return this._ifCurrent(frame, (current) => {
          const players = Array.isArray(frame.players) ? frame.players : [];
          const now = new Map(
            players.filter((p) => p?.id && p.id !== this._playerId).map((p) => [p.id, p.name || p.id]),
          );
          const before = current.players;
          current.players = now;
          if (!before) {
            for (const name of now.values()) this._dialogue.addNote(`${name} is here`);
            return;
          }
          for (const [id, name] of before) if (!now.has(id)) this._dialogue.addNote(`${name} left`);
          for (const [id, name] of now) if (!before.has(id)) this._dialogue.addNote(`${name} joined`);
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

  /** Whether `speakerId` is someone in a scene who is not one of its NPCs: another player. */
  _isOtherPlayer(current, speakerId) {
    if (!current.members || typeof speakerId !== "string" || !speakerId) return false;
    return !current.members.some((member) => member.id === speakerId);
  }

  /** The NPC a frame is from: its `speakerId` in a scene (if one of its NPCs), else the one. */
  _speakerOf(current, speakerId) {
    if (current.members?.some((member) => member.id === speakerId)) return speakerId;
    return current.members ? current.speaker : current.npcId;
  }

  /** Whoever speaks now: their figure talks, and the HUD shows their attitude. */
  _showSpeaker(current, speakerId, attitude = undefined) {
    const speaker = this._speakerOf(current, speakerId);
    const member = current.members?.find((m) => m.id === speaker);
    const changed = speaker !== current.speaker || attitude !== undefined;
    current.speaker = speaker;
    if (!changed) return speaker;
    this._scene.setSpeaking(speaker);
    const name = member ? member.name : current.npcName;
    const shown = attitude !== undefined ? attitude : member?.attitude;
    if (shown !== undefined && shown !== null) this._hud.showAttitude(name, shown, speaker);
    return speaker;
  }

  /** What stays on the panel when a conversation ends: their last line, or why it ended. */
  _farewell(current) {
    const farewell = this._dialogue.lineText.trim();
    const who = current.members?.find((member) => member.id === current.speaker)?.name ?? current.npcName;
    if (farewell) return `${who}: “${farewell}”`;
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

/** Another player's name as their line carries it (`speakerName`), else their id. */
function otherName(frame) {
  const name = typeof frame.speakerName === "string" ? frame.speakerName.trim() : "";
  return name || frame.speakerId;
}

function sameIds(a, b) {
  return a.length === b.length && a.every((member, index) => member.id === b[index].id);
}
