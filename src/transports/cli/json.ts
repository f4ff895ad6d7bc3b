/** A JSON object (not an array, not null): what the CLI expects of answers, profiles and token responses. */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The text's JSON value; undefined when it is empty or not JSON. */
export function parseJson(text: string): unknown {
  try {
    return text === "" ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}
