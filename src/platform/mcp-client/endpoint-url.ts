import { AppError } from "../../errors.ts";

/** The stored endpoint as a URL; a malformed one is `invalid_endpoint_url`, without the URL itself. */
export function parseEndpoint(raw: string): URL {
  try {
    return new URL(raw);
  } catch {
    // The URL itself stays out of the message: it may hold a path the caller must not see.
    throw new AppError("invalid_endpoint_url", "The endpoint URL is not a valid URL.", { rule: "syntax" });
  }
}
