import { z } from "@hono/zod-openapi";

/**
 * Input schemas shared by every feature and door: a feature's own schemas build on these, and the
 * REST, MCP and x402 operations declare them, so they sit below both.
 */

// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const controlCharacters = /^[^\u0000-\u001f\u007f]+$/;

/** A trimmed, single-line, human-entered name: no control characters (they end up in logs and UIs). */
export const singleLineText = (max: number) =>
  z.string().trim().min(1).max(max).regex(controlCharacters, "must not contain control characters");

/** A page request: `pageSize` and the `cursor` of the previous page (docs/api-conventions.md). */
export const PageQuery = z.object({
  pageSize: z.coerce
    .number()
    .int()
    .min(1)
    .max(200)
    .default(50)
    .openapi({
      param: { name: "pageSize", in: "query" },
      description: "Items per page (1–200).",
      example: 50,
    }),
  cursor: z
    .string()
    .max(512)
    .optional()
    .openapi({
      param: { name: "cursor", in: "query" },
      description: "`nextCursor` from the previous page.",
    }),
});
