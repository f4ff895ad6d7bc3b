import type { Context } from "hono";
import { AppError } from "../../errors.ts";

export type FormFields = Record<string, string | File | (string | File)[]>;

/**
 * A submitted form's fields, every value of a repeated field kept. Hono's parser throws a plain
 * TypeError on a malformed multipart body (no boundary, a cut-off part), which would surface as a
 * 500; the fault is the sender's, so it is a 400. A body that parsed once is cached by Hono, so
 * the guards and the route that read it after each other parse it once.
 */
export async function parseFormBody(c: Context): Promise<FormFields> {
  try {
    return await c.req.parseBody({ all: true });
  } catch {
    throw new AppError("invalid_request", "The form could not be read: its body is not well-formed.");
  }
}
