import type { Context } from "hono";
import type { ZodType, z } from "zod";
import { AppError } from "../../errors.ts";
import type { AppEnv } from "../http/env.ts";
import { invalidRequest } from "../http/validation-error.ts";

/** A JSON body validated by `schema`; an empty body is `{}`. Failures are `invalid_request`. */
export async function parseJsonBody<S extends ZodType>(c: Context<AppEnv>, schema: S): Promise<z.output<S>> {
  const text = await c.req.text();
  let value: unknown = {};
  if (text.trim() !== "") {
    try {
      value = JSON.parse(text);
    } catch {
      throw new AppError("invalid_request", "The body is not valid JSON.");
    }
  }
  return validate(schema, value, "body");
}

export function validate<S extends ZodType>(schema: S, value: unknown, where: string): z.output<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw invalidRequest(result.error.issues, where);
}
