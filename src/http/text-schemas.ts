import { z } from "@hono/zod-openapi";

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const controlCharacters = /^[^\u0000-\u001f\u007f]+$/;

/** A trimmed, single-line, human-entered name: no control characters (they end up in logs and UIs). */
export const singleLineText = (max: number) =>
  z.string().trim().min(1).max(max).regex(controlCharacters, "must not contain control characters");
