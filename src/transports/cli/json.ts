/** A JSON object (not an array, not null): what the CLI expects of answers, profiles and token responses. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
