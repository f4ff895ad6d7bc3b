import { createHash } from "node:crypto";
import type { Deps } from "../../deps.ts";
import type { Keyring } from "../../platform/vault/keyring.ts";
import { signToken, verifyToken } from "../../platform/vault/signed-token.ts";
import type { NextAction } from "./schemas.ts";

/** How long a suggestion's assumption stays usable: long enough to pay, short enough to be fresh. */
const ASSUMED_STATE_TTL_MS = 15 * 60_000;

/**
 * What a suggestion assumed: a subject (`onboarding:org_…`, `problem:prb_…`) and a digest of the
 * state it depends on; signed so it cannot be forged, and holding nothing secret.
 */
type Assumption = { subject: string; digest: string };

export function assumeState(keyring: Keyring, assumption: Assumption, now: Date): string {
  return signToken(keyring, "x402/assumed-state", {
    s: assumption.subject,
    d: assumption.digest,
    e: Math.floor((now.getTime() + ASSUMED_STATE_TTL_MS) / 1000),
  });
}

/** The assumption inside a token we signed, or undefined for a forged or malformed one. */
export function readAssumedState(
  keyring: Keyring,
  token: string,
  now: Date,
): (Assumption & { expired: boolean }) | undefined {
  const payload = verifyToken(keyring, "x402/assumed-state", token) as
    | { s?: unknown; d?: unknown; e?: unknown }
    | undefined;
  if (typeof payload?.s !== "string" || typeof payload.d !== "string" || typeof payload.e !== "number") {
    return undefined;
  }
  return { subject: payload.s, digest: payload.d, expired: payload.e * 1000 <= now.getTime() };
}

/** A stable digest of the facts a suggestion rests on. */
export const stateDigest = (facts: unknown): string =>
  createHash("sha256").update(JSON.stringify(facts)).digest("base64url").slice(0, 22);

/** How the x402 router checks an assumption of a subject kind before any payment. */
export type AssumptionKind = {
  /** The subject's current digest; undefined when the subject is gone. */
  digest(deps: Deps, id: string): Promise<string | undefined>;
  /** Fresh suggestions for the subject, sent with `stale_assumed_state`. */
  nextActions(deps: Deps, id: string): Promise<NextAction[]>;
};
