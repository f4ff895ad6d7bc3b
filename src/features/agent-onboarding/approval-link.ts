import type { Deps } from "../../deps.ts";
import { signToken, verifyToken } from "../../platform/vault/signed-token.ts";

/**
 * The link a human operator opens to take over a wallet organisation. It names the onboarding
 * session and is signed, so it can be shown again on every poll without storing a secret; it
 * works once (the organisation then has an owner) and dies with the session.
 */
export function approvalUrl(deps: Pick<Deps, "keyring" | "config">, sessionId: string): string {
  const token = signToken(deps.keyring, "onboarding/approval-link", { s: sessionId });
  // In the query: the access log records paths, never query strings.
  return `${deps.config.baseUrl}/approve?token=${encodeURIComponent(token)}`;
}

/** The session an approval token names, or undefined when the token is not ours. */
export function sessionOfApprovalToken(deps: Pick<Deps, "keyring">, token: string): string | undefined {
  const payload = verifyToken(deps.keyring, "onboarding/approval-link", token) as { s?: unknown } | undefined;
  return typeof payload?.s === "string" ? payload.s : undefined;
}
