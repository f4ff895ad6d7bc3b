import { AppError } from "../../errors.ts";
import { isUniqueViolation } from "../../platform/db/errors.ts";

/** Maps the (organisation, name) unique violation to a clear 409; rethrows anything else. */
export function rethrowNameTaken(error: unknown, name: string): never {
  if (isUniqueViolation(error)) {
    throw new AppError("name_taken", `An environment named "${name}" already exists in this organisation.`);
  }
  throw error;
}
