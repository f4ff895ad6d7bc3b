import { requireOwnerOrAdmin, requirePermission, type ServiceContext } from "../../../context.ts";
import type { Deps } from "../../../deps.ts";
import { AppError } from "../../../errors.ts";
import { signToken, verifyToken } from "../../../platform/vault/signed-token.ts";

/** How long an install link works. */
export const INSTALL_STATE_TTL_MS = 60 * 60 * 1000;

type InstallState = { o: string; iat: number };

/**
 * The link an owner or admin opens to install patchbay's GitHub App (installing and choosing
 * repositories happen on GitHub, by a person). Its `state` is signed and names the organisation,
 * so the callback binds the installation to the organisation that asked for it (and records as
 * installer the person whose browser comes back, not the one who asked for the link).
 */
export function createGithubInstallLink(args: { ctx: ServiceContext }): { url: string; expiresAt: string } {
  const { ctx } = args;
  requirePermission(ctx, "repositories:manage");
  requireOwnerOrAdmin(ctx);
  const github = ctx.deps.remediation.github;
  if (!github) throw new AppError("provider_unavailable", "No GitHub App is configured on this service.");
  const now = ctx.deps.clock().getTime();
  const state: InstallState = { o: ctx.actor.organizationId, iat: now };
  return {
    url: github.installUrl(signToken(ctx.deps.keyring, "github/install-state", state)),
    expiresAt: new Date(now + INSTALL_STATE_TTL_MS).toISOString(),
  };
}

export function readInstallState(
  deps: Pick<Deps, "keyring" | "clock">,
  token: string,
): InstallState | undefined {
  const payload = verifyToken(deps.keyring, "github/install-state", token) as
    | Partial<InstallState>
    | undefined;
  if (typeof payload?.o !== "string" || typeof payload.iat !== "number") return undefined;
  if (deps.clock().getTime() - payload.iat > INSTALL_STATE_TTL_MS) return undefined;
  return { o: payload.o, iat: payload.iat };
}
