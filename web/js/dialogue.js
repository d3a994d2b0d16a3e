// The dialogue panel: who you talk to, their line typing out, your replies, action cards.
// The current turn (your words, their line, its action cards) always shows in full; earlier
// turns fold into a collapsed, scrollable history above it. In a scene of several NPCs each
// line shows its speaker's name, and the player picks whom to talk to (or everyone). In a scene
// shared with other players, another player's line opens a turn of its own, under their name, and
// who joins or leaves shows as a quiet note.

import { moodCss, moodLook } from "./moods.js";
import { Typewriter } from "./typewriter.js";

const MAX_CARDS = 6;
const MAX_NOTES = 4;
const MAX_HISTORY = 50;
const IDLE_HINT = "Click someone here, or press their number, to walk up and talk.";

export class DialoguePanel {
  constructor(el, { onOption, onText, onWalkAway, onAddress = () => {} }) {
    this._el = el;
    this._handlers = { onOption, onText, onWalkAway, onAddress };
    // A scene's NPCs (`[{id, name}]`, null outside a scene), who speaks now, and to whom.
    this._members = null;
    this._speaker = null;
    this._addressee = null;
    // Screen readers hear the line once it is fully shown, not every typed fragment.
    this._line = new Typewriter(el.npcLine, () => {
      if (this._lineEnded) el.npcLine.setAttribute("aria-busy", "false");
    });
    this._lineEnded = false;
    // The other player whose line opens this turn, while it may still grow (null otherwise).
    this._other = null;
    this._busy = true;
    this._open = false;
    this._options = [];
    el.form.addEventListener("submit", (event) => {
      event.preventDefault();
      const text = el.text.value.trim();
      if (!text || this._busy || !this._open) return;
      el.text.value = "";
      this._handlers.onText(text);
    });
    el.walkAway.addEventListener("click", () => this._handlers.onWalkAway());
    this.close();
  }

  get isOpen() {
    return this._open;
  }

  get isBusy() {
    return this._busy;
  }

  /** Walking up to someone: a fresh panel, input off until the first `encounter.idle`. */
  open(npcName) {
    this._open = true;
    this._el.panel.dataset.state = "open";
    this._el.npcName.textContent = npcName;
    this._el.hint.hidden = true;
    this._el.mood.hidden = true;
    this._el.cards.replaceChildren();
    this._clearHistory();
    this._showPlayerLine("");
    this._showOtherLine(null);
    this.setScene(null);
    this.startTurn();
    this.setOptions([]);
    this._el.walkAway.disabled = false;
  }

  /**
   * Talking to several NPCs at once (`members`: `[{id, name}]`), or to one (null): in a scene
   * each line names its speaker, and a row of choices says whom the player talks to.
   */
  setScene(members) {
    this._members = Array.isArray(members) && members.length ? members : null;
    this._speaker = null;
    this._el.panel.dataset.scene = String(Boolean(this._members));
    this._showSpeaker(null);
    const row = this._el.addressee;
    if (!row) return;
    row.hidden = !this._members;
    if (!this._members) {
      row.replaceChildren();
      return;
    }
    const label = document.createElement("span");
    label.className = "addressee-label";
    label.textContent = "Talk to";
    const choices = [{ id: null, name: "Everyone" }, ...this._members].map((member) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "addressee-choice";
      button.setAttribute("role", "radio");
      button.dataset.testid = member.id ? `address-${member.id}` : "address-everyone";
      button.dataset.npcId = member.id ?? "";
      if (member.id) button.dataset.speaker = String(this._speakerIndex(member.id));
      button.textContent = member.name;
      button.addEventListener("click", () => this._handlers.onAddress(member.id));
      return button;
    });
    row.replaceChildren(label, ...choices);
    this.setAddressee(null);
  }

  /** Show whom the player's next words go to (an NPC's id, or null for everyone). */
  setAddressee(npcId) {
    this._addressee = npcId;
    const buttons = this._el.addressee?.querySelectorAll("button") ?? [];
    for (const button of buttons) {
      button.setAttribute("aria-checked", String((button.dataset.npcId || null) === npcId));
    }
    const to = this._memberName(npcId);
    this._el.text.placeholder = to ? `Say something to ${to}…` : "Say something…";
  }

  /** Back to nobody; `reason` (plain words) replaces the usual hint when given. */
  close(reason = "") {
    this._open = false;
    this._el.panel.dataset.state = "closed";
    this._el.npcName.textContent = "Nobody";
    this._el.hint.hidden = false;
    this._el.hint.textContent = reason || IDLE_HINT;
    this._el.mood.hidden = true;
    this._line.clear();
    this._el.npcLine.setAttribute("aria-busy", "false");
    this._el.cards.replaceChildren();
    this._clearHistory();
    this._showPlayerLine("");
    this._showOtherLine(null);
    this.setScene(null);
    this.setOptions([]);
    this._el.walkAway.disabled = true;
    this.setBusy(true);
  }

  /** Where the player is: the game's line about the place shows while nobody is talked to. */
  setPlace(description) {
    this._el.place.textContent = description;
    this._el.place.hidden = !description;
  }

  /** The name the harness gave the NPC (it may differ from the list's). */
  setNpcName(npcName) {
    this._el.npcName.textContent = npcName;
  }

  /** A turn begins: the next delta starts a new line. */
  startTurn() {
    this._line.flush();
    this._line.clear();
    this._el.sceneLines?.replaceChildren();
    this._el.presence?.replaceChildren();
    this._speaker = null;
    this._other = null;
    this._showSpeaker(null);
    this._lineEnded = false;
    this._el.npcLine.setAttribute("aria-busy", "true");
    this.setBusy(true);
  }

  /** The player spoke; in a scene `toId` names the NPC spoken to (none: everyone). */
  playerSaid(text, toId = null) {
    this._archiveTurn();
    const to = this._memberName(toId);
    this._showPlayerLine(text, this._members ? to || "everyone" : "");
    this._showOtherLine(null);
    this.startTurn();
  }

  /**
   * Another player of a shared scene said `text` (`speakerId`, shown as `name`): their words
   * open a turn of their own, and input waits until the floor returns (`encounter.idle`).
   */
  otherSaid(speakerId, name, text) {
    if (this._other === speakerId && this._speaker === null) {
      // More of the same line (the harness sends it whole, but a split line stays one).
      this._el.otherLine.lastChild.textContent += text;
      return;
    }
    this._archiveTurn();
    this._showPlayerLine("");
    this._showOtherLine(speakerId, name, text);
    this.startTurn();
    this._other = speakerId;
    this._el.otherLine?.scrollIntoView({ block: "nearest" });
  }

  /** What the NPC said last (typed out or not). */
  get lineText() {
    return this._line.text;
  }

  /**
   * Bring their latest line into view, and the replies and the Say box too when the window is
   * tall enough (the line wins). Beside the scene the Say box sits below the scrolling body and
   * always shows; on a narrow screen the page scrolls, and this scrolls it.
   */
  reveal() {
    if (!this._open) return;
    this._el.options.lastElementChild?.scrollIntoView({ block: "nearest" });
    this._el.form.scrollIntoView({ block: "nearest" });
    this._el.npcLine.scrollIntoView({ block: "nearest" });
    // In a scene, whose line it is shows with it (a line too long for both keeps its start),
    // and so does this round's first line (another player's, or another NPC's) when the two
    // fit together.
    if (this._el.speaker && !this._el.speaker.hidden) this._el.speaker.scrollIntoView({ block: "nearest" });
    const other = this._el.otherLine && !this._el.otherLine.hidden ? this._el.otherLine : null;
    const first = other ?? this._el.sceneLines?.firstElementChild;
    const scroller = this._el.npcLine.closest(".dialogue-body");
    if (first && scroller) {
      const span = this._el.npcLine.getBoundingClientRect().bottom - first.getBoundingClientRect().top;
      if (span <= scroller.clientHeight) first.scrollIntoView({ block: "nearest" });
    }
  }

  /** More of a line; in a scene `speakerId` says whose (another's starts a line of its own). */
  appendLine(text, speakerId = null) {
    this._other = null;
    if (this._members && speakerId && speakerId !== this._speaker) {
      this._settleSceneLine();
      this._speaker = speakerId;
      this._showSpeaker(speakerId);
    } else if (this._lineEnded) {
      // A second line in the same turn continues the paragraph instead of erasing the first.
      this._line.push(" ");
      this._lineEnded = false;
      this._el.npcLine.setAttribute("aria-busy", "true");
    }
    this._line.push(text);
    this.reveal();
  }

  endLine(mood) {
    this._lineEnded = true;
    if (!this._line.typing) this._el.npcLine.setAttribute("aria-busy", "false");
    const look = moodLook(mood);
    this._el.mood.hidden = false;
    this._el.mood.dataset.mood = String(mood);
    this._el.mood.textContent = look.mood === mood ? look.word : String(mood);
    this._el.mood.style.setProperty("--mood", moodCss(mood));
    this.reveal();
  }

  /**
   * Replace the reply buttons with `items` (`[{id, label, offer?}]`). An item with `offer`
   * (`{action, cost}`) is the NPC's proposal: picking it commits a trade, so it is drawn as a
   * card with what the player gives and an Accept mark, and keeps its number like any reply.
   */
  setOptions(items, speakerId = null) {
    this._options = Array.isArray(items) ? items : [];
    const to = this._members ? this._memberName(speakerId) : "";
    this._el.options.setAttribute("aria-label", to ? `Replies to ${to}` : "Replies");
    const rows = this._options.map((item, index) => {
      const number = index + 1;
      const terms = offerTerms(item);
      const button = terms ? offerButton(item.label, terms, number) : replyButton(item.label, number);
      button.dataset.optionId = item.id;
      button.dataset.testid = `option-${number}`;
      button.addEventListener("click", () => this.pickOption(number));
      const row = document.createElement("li");
      if (terms) row.className = "offer-row";
      row.append(button);
      return row;
    });
    this._el.options.replaceChildren(...rows);
    this._applyBusy();
    if (rows.length) this.reveal();
  }

  /** Pick reply number `n` (1-based); false when there is no such reply or input is off. */
  pickOption(n) {
    const item = this._options[n - 1];
    if (!item || this._busy || !this._open) return false;
    const terms = offerTerms(item);
    // The player's line says what they agreed to give, since that is what the pick commits.
    const said = terms ? `I accept: ${item.label}${terms.cost ? ` (${terms.cost})` : ""}` : item.label;
    this._handlers.onOption(item.id, said);
    return true;
  }

  addAction(name, ok, summary) {
    const card = document.createElement("li");
    card.className = `action-card ${ok ? "is-ok" : "is-refused"}`;
    card.dataset.testid = ok ? "action-ok" : "action-refused";
    card.dataset.action = name;
    const badge = document.createElement("span");
    badge.className = "action-badge";
    badge.textContent = ok ? "Done" : "Refused";
    const text = document.createElement("span");
    text.className = "action-summary";
    text.textContent = summary || name;
    card.append(badge, text);
    this._el.cards.append(card);
    while (this._el.cards.children.length > MAX_CARDS) this._el.cards.firstElementChild.remove();
  }

  /** A quiet line about who is in a shared scene ("Captain Birch joined"): no one's words, so
   * it is kept apart from the lines and never under a speaker's name. */
  addNote(text) {
    const notes = this._el.presence;
    if (!notes || !this._open) return;
    const note = document.createElement("li");
    note.className = "presence-note";
    note.dataset.testid = "presence-note";
    note.textContent = text;
    notes.append(note);
    while (notes.children.length > MAX_NOTES) notes.firstElementChild.remove();
    note.scrollIntoView({ block: "nearest" });
  }

  setBusy(busy) {
    this._busy = busy;
    this._applyBusy();
  }

  /** After a turn: put the keyboard on the first reply, unless the player is elsewhere. */
  focusInput() {
    const active = document.activeElement;
    const lost = !active || active === document.body || this._el.panel.contains(active);
    if (!lost || !this._open) return;
    const first = this._el.options.querySelector("button");
    // Focusing scrolls by default, which could push their line out of a short window.
    (first ?? this._el.text).focus({ preventScroll: true });
    this.reveal();
  }

  _applyBusy() {
    const off = this._busy || !this._open;
    this._el.panel.setAttribute("aria-busy", String(this._busy && this._open));
    this._el.text.disabled = off;
    this._el.send.disabled = off;
    for (const button of this._el.options.querySelectorAll("button")) button.disabled = off;
  }

  /** Move the finished turn (your words, their line, its cards) into the history. */
  _archiveTurn() {
    const said = this._el.playerLine.hidden ? "" : this._el.playerLine.textContent;
    const other = !this._el.otherLine || this._el.otherLine.hidden ? "" : this._el.otherLine.textContent;
    this._line.flush();
    const line = this._line.text;
    const cards = [...this._el.cards.children];
    const earlier = [...(this._el.sceneLines?.children ?? [])].map((p) => p.textContent);
    const notes = [...(this._el.presence?.children ?? [])].map((li) => li.textContent);
    if (!said && !other && !line && cards.length === 0 && earlier.length === 0 && notes.length === 0) return;
    const entry = document.createElement("li");
    entry.className = "history-turn";
    entry.dataset.testid = "history-turn";
    if (said) entry.append(paragraph("history-player", said));
    if (other) entry.append(paragraph("history-other", other));
    for (const text of earlier) entry.append(paragraph("history-npc", text));
    const who = this._members ? this._memberName(this._speaker) : this._el.npcName.textContent;
    if (line) entry.append(paragraph("history-npc", `${who}: ${line}`));
    if (cards.length) {
      const list = document.createElement("ul");
      list.className = "action-cards";
      for (const card of cards) {
        card.dataset.testid = `history-${card.dataset.testid}`;
        list.append(card);
      }
      entry.append(list);
    }
    for (const text of notes) entry.append(paragraph("history-presence", text));
    const history = this._el.historyList;
    history.append(entry);
    while (history.children.length > MAX_HISTORY) history.firstElementChild.remove();
    this._el.history.hidden = false;
    this._el.historySummary.textContent = `Earlier in this conversation (${history.children.length})`;
    history.scrollTop = history.scrollHeight;
  }

  _clearHistory() {
    this._el.historyList.replaceChildren();
    this._el.history.hidden = true;
    this._el.history.open = false;
  }

  _showPlayerLine(text, to = "") {
    this._el.playerLine.hidden = !text;
    this._el.playerLine.textContent = text ? `You${to ? `, to ${to}` : ""}: ${text}` : "";
  }

  /** Another player's line atop the turn: a "Player" mark, their name in the players' colour
   * (never an NPC's), their words; `speakerId` null hides it. */
  _showOtherLine(speakerId, name = "", text = "") {
    const line = this._el.otherLine;
    if (!line) return;
    line.hidden = !speakerId;
    line.replaceChildren();
    delete line.dataset.speakerId;
    if (!speakerId) return;
    line.dataset.speakerId = speakerId;
    const tag = speakerTag(name, "player");
    tag.dataset.testid = "other-name";
    line.append(span("speaker-kind", "Player"), document.createTextNode(" "), tag, document.createTextNode(" "));
    line.append(document.createTextNode(text));
  }

  /** A scene's line whose speaker is done: it stays above the next speaker's, with its name. */
  _settleSceneLine() {
    this._line.flush();
    const text = this._line.text.trim();
    if (text && this._speaker && this._el.sceneLines) {
      const said = document.createElement("p");
      said.className = "scene-said";
      said.dataset.testid = "scene-said";
      said.dataset.speakerId = this._speaker;
      said.append(speakerTag(this._memberName(this._speaker), this._speakerIndex(this._speaker)));
      said.append(document.createTextNode(` ${text}`));
      this._el.sceneLines.append(said);
    }
    this._line.clear();
    this._lineEnded = false;
    this._el.npcLine.setAttribute("aria-busy", "true");
  }

  _showSpeaker(speakerId) {
    const label = this._el.speaker;
    if (!label) return;
    label.hidden = !speakerId;
    label.replaceChildren();
    delete label.dataset.speakerId;
    if (!speakerId) return;
    label.dataset.speakerId = speakerId;
    label.append(speakerTag(this._memberName(speakerId), this._speakerIndex(speakerId)));
  }

  _memberName(npcId) {
    return this._members?.find((member) => member.id === npcId)?.name ?? "";
  }

  _speakerIndex(npcId) {
    return Math.max(0, this._members?.findIndex((member) => member.id === npcId) ?? 0);
  }
}

/** The offer's terms (`{action, cost}`) when `item` is an offer, else null. */
export function offerTerms(item) {
  const offer = item?.offer;
  if (!offer || typeof offer !== "object" || Array.isArray(offer)) return null;
  return {
    action: typeof offer.action === "string" ? offer.action : "",
    cost: typeof offer.cost === "string" ? offer.cost.trim() : "",
  };
}

function replyButton(label, number) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "option";
  button.append(keyHint(number), document.createTextNode(` ${label}`));
  return button;
}

function offerButton(label, terms, number) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "option is-offer";
  button.dataset.offerAction = terms.action;
  // One name for screen readers instead of the pieces in reading order.
  const cost = terms.cost ? `, for ${terms.cost}` : "";
  button.setAttribute("aria-label", `Accept offer ${number}: ${label}${cost}`);
  const body = document.createElement("span");
  body.className = "offer-body";
  body.append(span("offer-tag", "Offer"), span("offer-label", label, "offer-label"));
  if (terms.cost) {
    const cost = span("offer-cost", "", "offer-cost");
    cost.append(span("offer-cost-word", "You give "), span("offer-cost-value", terms.cost));
    body.append(cost);
  }
  button.append(keyHint(number), body, span("offer-accept", "Accept", "offer-accept"));
  return button;
}

function speakerTag(name, index) {
  const tag = document.createElement("span");
  tag.className = "speaker-name";
  tag.dataset.speaker = String(index);
  tag.dataset.testid = "speaker-name";
  tag.textContent = `${name}:`;
  return tag;
}

function keyHint(number) {
  const key = document.createElement("kbd");
  key.textContent = String(number);
  return key;
}

function span(className, text, testid = "") {
  const el = document.createElement("span");
  el.className = className;
  if (text) el.textContent = text;
  if (testid) el.dataset.testid = testid;
  return el;
}

function paragraph(className, text) {
  const p = document.createElement("p");
  p.className = className;
  p.textContent = text;
  return p;
}
