import type { ZodType } from "zod";
import { AppError } from "../../errors.ts";

/**
 * Validates a form's values with the same zod schema the REST route uses, failing the same way
 * (`invalid_request` with `errors: [{ path, message }]`), so the UI shows the API's messages.
 */
export function parseWith<T>(schema: ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const errors = result.error.issues.slice(0, 20).map((issue) => ({
    path: issue.path.map(String).join("."),
    message: issue.message,
  }));
  const first = errors[0];
  throw new AppError(
    "invalid_request",
    first ? `${first.path || "The form"}: ${first.message}` : "Invalid form.",
    {
      errors,
    },
  );
}
