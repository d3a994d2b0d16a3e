// How a mood looks: a figure colour, a glow, and a word for the badge.

const LOOKS = Object.freeze({
  neutral: { body: 0x3f7fd9, glow: 0x0a1a33, word: "neutral" },
  friendly: { body: 0x3fbf6a, glow: 0x0c3318, word: "friendly" },
  pleased: { body: 0x7bd94a, glow: 0x1c3a0c, word: "pleased" },
  amused: { body: 0x33c4c4, glow: 0x0b3333, word: "amused" },
  wary: { body: 0x9b6fe0, glow: 0x24153d, word: "wary" },
  annoyed: { body: 0xe0962e, glow: 0x3d2405, word: "annoyed" },
  hostile: { body: 0xe0443a, glow: 0x4a0a06, word: "hostile" },
});

export const NEUTRAL_MOOD = "neutral";

/** The look for a mood; moods this client does not know look neutral. */
export function moodLook(mood) {
  const known = typeof mood === "string" && Object.hasOwn(LOOKS, mood);
  const key = known ? mood : NEUTRAL_MOOD;
  return { mood: key, ...LOOKS[key] };
}

/** A CSS colour for a mood's badge border. */
export function moodCss(mood) {
  return `#${moodLook(mood).body.toString(16).padStart(6, "0")}`;
}
