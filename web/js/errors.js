// Error frames in plain words: one sentence per code of the closed set in docs/protocol.md.

const FRIENDLY = Object.freeze({
  bad_frame: "The game did not understand a message from this page. Reloading the page may help.",
  bad_option: "That reply is no longer on offer. Pick one of the current replies or type your own.",
  unknown_encounter: "That conversation has already ended. Walk up to them again to keep talking.",
  encounter_exists: "You are already talking to them.",
  busy: "Not right now: they are still talking, or the game's world is out of reach. Wait a moment, then try again.",
  unknown_npc: "There is nobody by that name here.",
  unknown_player: "The game does not know you as this player. Check the ?player= part of the address.",
  npc_unavailable: "They do not respond right now.",
  llm_unavailable:
    "No answer: the character's mind (the language model) could not be reached. Try again in a moment.",
  unauthorized:
    "This server needs an access token. Open the page with ?token=… added to the address.",
  forbidden: "This connection cannot do that: it plays someone else, or the clock is the game's.",
  limit: "That was too much at once. Slow down or say something shorter.",
  internal: "Something went wrong inside the game server. Walk away and try again.",
});

/** Every code this client has words for (the tests compare it with the schema). */
export const KNOWN_CODES = Object.freeze(Object.keys(FRIENDLY));

/** A sentence for people; an unknown code falls back to the server's own message. */
export function friendlyError(code, message) {
  if (Object.hasOwn(FRIENDLY, code)) return FRIENDLY[code];
  const said = typeof message === "string" ? message.trim() : "";
  return said || "Something went wrong.";
}

/** The server's own message, shown small, unless it adds nothing to the sentence. */
export function errorDetail(code, message) {
  if (!Object.hasOwn(FRIENDLY, code)) return "";
  return typeof message === "string" ? message.trim() : "";
}
