// Wires the page together: connection, scene, people, dialogue, HUD, ticker, keyboard.

import { DialoguePanel } from "./dialogue.js";
import { EncounterController } from "./encounter.js";
import { Hud, placeDetails, prettyId } from "./hud.js";
import { Connection, frameUrl, playerFromPage } from "./net.js";
import { MAX_SCENE_NPCS, PeopleList } from "./people.js";
import { placeLook } from "./places.js";
import { ProblemList } from "./problems.js";
import { createScene } from "./scene.js";
import { StatusIndicator } from "./status.js";
import { Ticker } from "./ticker.js";

const DEFAULT_PLAYER = "player-1";
const TICK_DAYS = 5;

const byId = (id) => document.getElementById(id);

async function start() {
  const playerId = playerFromPage(window.location, DEFAULT_PLAYER);
  const placeNames = new Map();
  let npcs = [];
  let present = [];

  const status = new StatusIndicator(byId("status"), byId("status-text"));
  const problems = new ProblemList(byId("errors"));
  const hud = new Hud({
    stats: byId("hud-stats"),
    place: byId("hud-place"),
    location: byId("hud-location"),
    attitude: byId("hud-attitude"),
    lists: byId("hud-lists"),
  });
  // The game's own schema words its attitudes; the page works without it (Omega's scale).
  fetch("frames.schema.json")
    .then((answer) => (answer.ok ? answer.json() : null))
    .then((schema) => schema && hud.useSchema(schema))
    .catch(() => {});
  const ticker = new Ticker(byId("ticker"), (id) => placeNames.get(id) ?? prettyId(id));
  const people = new PeopleList(
    {
      list: byId("people-list"),
      empty: byId("people-empty"),
      elsewhere: byId("people-elsewhere"),
      group: byId("people-group"),
    },
    (npcId) => walkUpTo(npcId),
    () => walkUpToEveryone(),
  );
  const scene = await createScene(byId("scene"), byId("scene-labels"), {
    onPick: (npcId) => walkUpTo(npcId),
  });
  byId("scene-fallback").hidden = scene.available;

  const connection = new Connection(frameUrl(window.location), {
    onOpen: () => {
      status.online();
      connection.send({ t: "hello", playerId });
    },
    onFrame: (frame) => receive(frame),
    onClose: (retryInMs) => {
      status.offline(retryInMs);
      encounters.connectionLost();
      people.setEnabled(false);
      byId("advance").disabled = true;
    },
    onGarbage: (what) => console.warn("ignored a message that is not a frame:", what),
  });
  const send = (frame) => connection.send(frame);

  const dialogue = new DialoguePanel(
    {
      panel: byId("dialogue"),
      npcName: byId("dialogue-npc"),
      mood: byId("dialogue-mood"),
      hint: byId("dialogue-hint"),
      place: byId("place-description"),
      playerLine: byId("player-line"),
      otherLine: byId("other-line"),
      npcLine: byId("npc-line"),
      cards: byId("action-cards"),
      history: byId("history"),
      historySummary: byId("history-summary"),
      historyList: byId("history-list"),
      options: byId("options"),
      form: byId("say-form"),
      text: byId("say-text"),
      send: byId("say-send"),
      walkAway: byId("walk-away"),
      addressee: byId("addressee"),
      speaker: byId("npc-speaker"),
      sceneLines: byId("scene-lines"),
      presence: byId("presence-notes"),
    },
    {
      onOption: (optionId, label) => encounters.sayOption(optionId, label),
      onText: (text) => encounters.sayText(text),
      onWalkAway: () => walkAway(),
      onAddress: (npcId) => encounters.address(npcId),
    },
  );
  const encounters = new EncounterController({ send, playerId, dialogue, scene, people, hud });

  function walkUpTo(npcId) {
    const npc = present.find((candidate) => candidate.id === npcId);
    if (npc && connection.isOpen) encounters.open(npc);
  }

  function walkUpToEveryone() {
    const together = present.slice(0, MAX_SCENE_NPCS);
    if (together.length > 1 && connection.isOpen) encounters.openScene(together);
  }

  function walkAway() {
    encounters.close();
    // The focused control just got disabled; hand the keyboard to the people list.
    (byId("people-list").querySelector("button") ?? byId("dialogue")).focus();
  }

  function showPeople() {
    const here = hud.location().id;
    // Who is here: the view's own list when it has one (people move), else welcome's by place.
    const listed = placeDetails(hud.data).people;
    const known = new Map(npcs.map((npc) => [npc.id, npc]));
    const isHere = listed
      ? (npc) => listed.some((person) => person.id === npc.id)
      : (npc) => !here || npc.locationId === here;
    const hereNow = listed
      ? listed.map((person) => ({ ...known.get(person.id), ...person, locationId: here }))
      : npcs.filter(isHere);
    present = hereNow.map((npc, index) => ({
      ...npc,
      name: npc.name || prettyId(npc.id),
      number: index + 1,
    }));
    // Someone who left here since `welcome` is elsewhere, but where is not known.
    const placeOf = (id) => (id === here ? "" : placeNames.get(id) ?? prettyId(id));
    const away = npcs.filter((npc) => !isHere(npc)).map((npc) => ({ ...npc, place: placeOf(npc.locationId) }));
    people.update(present, away);
    scene.setFigures(present);
    const current = encounters.current;
    const talkingTo = current ? (current.members ?? [{ id: current.npcId }]) : [];
    // Never keep talking to someone who is not here (the player travelled, or they left).
    if (talkingTo.some((npc) => !present.some((here) => here.id === npc.id))) encounters.npcGone();
    if (encounters.current) {
      people.setActive(encounters.current.npcId, Boolean(encounters.current.members));
      scene.setActive(encounters.current.to ?? encounters.current.npcId);
    }
  }

  function showHud(data) {
    hud.show(data);
    const place = hud.location();
    if (place.id) placeNames.set(place.id, place.name);
    byId("title-place").textContent = place.name ? `· ${place.name}` : "";
    document.title = place.name ? `${place.name} · star-harness` : "star-harness";
    byId("stage").setAttribute("aria-label", place.name || "Where you are");
    const details = placeDetails(data);
    scene.setPlace(placeLook({ id: place.id, scene: details.scene }));
    dialogue.setPlace(details.description);
    showPeople();
  }

  function receive(frame) {
    switch (frame.t) {
      case "welcome":
        npcs = Array.isArray(frame.npcs) ? frame.npcs : [];
        encounters.setRevision(frame.revision);
        showHud(frame.hud);
        // The news so far, for a page opened (or reloaded) after it was made.
        ticker.restore(frame.hud?.news);
        people.setEnabled(true);
        byId("advance").disabled = false;
        return;
      case "hud":
        if (frame.playerId === playerId) showHud(frame.data);
        return;
      case "world.event":
        ticker.add(frame.locationId, frame.headline);
        return;
      case "error":
        if (encounters.isStale(frame)) return;
        encounters.handleError(frame);
        problems.showError(frame.code, frame.message);
        return;
      default:
        if (!encounters.handle(frame)) console.warn("ignored a frame of unknown type", frame.t);
    }
  }

  byId("advance").addEventListener("click", () => {
    send({ t: "world.tick", days: TICK_DAYS });
  });

  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === "Escape") {
      if (encounters.current) {
        event.preventDefault();
        walkAway();
      }
      return;
    }
    if (!/^[1-9]$/.test(event.key) || isTyping(event.target)) return;
    const n = Number(event.key);
    if (dialogue.isOpen) {
      if (dialogue.pickOption(n)) event.preventDefault();
      return;
    }
    const npc = present[n - 1];
    if (npc) {
      event.preventDefault();
      walkUpTo(npc.id);
    }
  });

  // A small read-only handle for tests and for poking around in the console.
  window.starHarness = {
    playerId,
    sceneAvailable: scene.available,
    figureLook: (npcId) => scene.look(npcId),
    figurePoint: (npcId) => scene.screenPoint(npcId),
    attitudeWord: (attitude) => hud.attitudeWord(attitude),
    encounter: () => (encounters.current ? { ...encounters.current } : null),
    place: () => scene.place,
  };

  status.connecting();
  connection.start();
  window.addEventListener("pagehide", () => connection.stop());
  // Coming back from the back/forward cache: the old socket is gone, dial again.
  window.addEventListener("pageshow", (event) => {
    if (!event.persisted) return;
    status.connecting();
    connection.start();
  });
}

function isTyping(target) {
  return target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
}

start();
