import { AppError } from "../../errors.ts";

/** Maps the (organisation, name) unique violation to a clear 409; rethrows anything else. */
export function rethrowNameTaken(error: unknown, name: string): never {
  const code = (error as { code?: unknown; cause?: { code?: unknown } })?.cause?.code ?? (error as { code?: unknown })?.code;
  if (code === "23505") {
    throw new AppError("name_taken", `An environment named "${name}" already exists in this organisation.`);
  }
  throw error;
}
