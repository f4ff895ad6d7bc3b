/**
 * The first grouping's message masks (until the masks of mask-message.ts): only numbers, uuids,
 * prefixed ids of 8 or more characters and hex. Problems grouped by a message under them keep
 * their fingerprint until an occurrence after the upgrade moves them to the new one
 * (adopt-fingerprints.ts); nothing else uses these masks.
 */
const legacyMasks: [RegExp, string][] = [
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "<uuid>"],
  [/\b[a-z]{2,5}_[0-9a-z]{8,}\b/gi, "<id>"],
  [/\b0x[0-9a-f]+\b/gi, "<hex>"],
  [/\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{8,}\b/gi, "<hex>"],
  [/(?<![A-Za-z<])\d+(?:\.\d+)?/g, "<n>"],
];

export function legacyMaskMessage(message: string): string {
  let out = message.trim().split("\n")[0] ?? "";
  for (const [pattern, marker] of legacyMasks) out = out.replace(pattern, marker);
  return out;
}
