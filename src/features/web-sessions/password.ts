import { hash, verify } from "@node-rs/argon2";
import { AppError } from "../../errors.ts";

/**
 * argon2id with OWASP's second recommended setting (19 MiB, 2 passes, 1 lane): about 30 ms
 * here, slow enough to make offline guessing expensive, cheap enough that sign-in stays fast.
 * `2` is the library's Argon2id (its enum is a `const enum`, which type stripping cannot inline).
 */
const options = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const PASSWORD_MIN_LENGTH = 12;
/** Long enough for any passphrase or manager; bounds the work one request can ask for. */
export const PASSWORD_MAX_LENGTH = 256;

export const hashPassword = (password: string): Promise<string> => hash(password, options);

/** A malformed stored hash is a mismatch, never an exception the caller could tell apart. */
export async function verifyPassword(stored: string, password: string): Promise<boolean> {
  try {
    return await verify(stored, password);
  } catch {
    return false;
  }
}

let dummy: Promise<string> | undefined;

/**
 * Runs one verification against a throwaway hash, so an unknown email or a user without a
 * password costs the same time as a wrong password: response times do not tell which emails
 * have accounts. Always false.
 */
export async function burnVerification(password: string): Promise<false> {
  dummy ??= hash("patchbay-no-such-user", options);
  await verifyPassword(await dummy, password);
  return false;
}

/** The password rules, as one invalid_request naming the field. */
export function assertPasswordAcceptable(password: string, field = "password"): void {
  const message =
    password.length < PASSWORD_MIN_LENGTH
      ? `must be at least ${PASSWORD_MIN_LENGTH} characters`
      : password.length > PASSWORD_MAX_LENGTH
        ? `must be at most ${PASSWORD_MAX_LENGTH} characters`
        : password.trim().length === 0
          ? "must not be blank"
          : undefined;
  if (message) {
    throw new AppError("invalid_request", `The password ${message}.`, {
      errors: [{ path: field, message }],
    });
  }
}
