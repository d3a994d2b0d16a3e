// What a place looks like in 3D. The game's own word (`location.scene` in its HUD) when it gives
// one; else Omega station's look for its own places (the sample game this client was drawn
// for); else a plain room, so another game never finds itself in Omega's bar.

/** The looks this client can draw. */
export const LOOKS = Object.freeze(["bar", "room"]);
const PLAIN = "room";
const OMEGA_PLACES = Object.freeze({ "omega-station": "bar" });

/** The look for the place `{id, scene}` (`scene` the game's word, possibly empty). */
export function placeLook({ id, scene }) {
  if (scene) return LOOKS.includes(scene) ? scene : PLAIN;
  return Object.hasOwn(OMEGA_PLACES, id) ? OMEGA_PLACES[id] : PLAIN;
}
