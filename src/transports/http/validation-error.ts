import { AppError } from "../../errors.ts";

type Issue = { path: readonly PropertyKey[]; message: string };

/** Validation issues as the one `invalid_request` problem every transport answers with. */
export function invalidRequest(issues: readonly Issue[], where: string): AppError {
  const errors = issues.slice(0, 20).map((issue) => ({
    path: issue.path.map(String).join("."),
    message: issue.message,
  }));
  const first = errors[0];
  return new AppError(
    "invalid_request",
    first ? `Invalid ${where}: ${first.path || "(root)"}: ${first.message}` : `Invalid ${where}.`,
    { errors },
  );
}
