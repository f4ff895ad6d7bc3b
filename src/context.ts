import { is } from "drizzle-orm";
import { PgTransaction } from "drizzle-orm/pg-core";
import { type Actor, type MemberActor, systemActor } from "./actor.ts";
import type { Deps } from "./deps.ts";
import { AppError } from "./errors.ts";
import { scopeForPermission } from "./oauth-resources.ts";
import type { Permission } from "./permissions.ts";
import { transaction } from "./platform/db/after-commit.ts";
import type { Db } from "./platform/db/client.ts";

/**
 * The doors a change comes through, as the audit trail names them. `cli` is REST called by the
 * `patchbay` CLI, told by its `User-Agent: patchbay-cli/…` (docs/decisions.md): a label for
 * people reading the trail, not a security boundary.
 */
export const channels = ["rest", "cli", "mcp", "web", "x402", "system"] as const;
export type Channel = (typeof channels)[number];

/**
 * What every verb receives: who is calling (resolved once by the transport), the services, and
 * the request's id for the audit trail and the log. Signing up is the one verb whose caller is
 * not yet an actor (a `Payer`).
 */
export type ServiceContext<A = Actor> = {
  deps: Deps;
  actor: A;
  /** The door the request came through, for the audit trail. */
  channel: Channel;
  requestId: string;
  idempotencyKey?: string | undefined;
};

/** A job's context: the system acting for the organisation whose row the job works on. */
export const systemContext = (
  deps: Deps,
  job: { name: string; id: string; organizationId: string },
): ServiceContext => ({
  deps,
  actor: systemActor(job.name, job.organizationId),
  channel: "system",
  requestId: `job:${job.name}:${job.id}`,
});

/**
 * Runs `fn` atomically: in a new transaction on a database handle, or in the open one when `on`
 * already is a transaction (or a context whose `db` is). A verb called from inside another's
 * transaction joins it rather than taking a savepoint: its writes and the caller's audit row and
 * job enqueues commit together or not at all, and no caller needs to survive the inner part's
 * failure while committing the rest (one that does opens its savepoint itself: `tx.transaction`).
 * Joining also spares PostgreSQL the two round trips of SAVEPOINT and RELEASE. A new transaction
 * runs what `afterCommit` registered in it once it has committed (a queued job's worker woken).
 */
export function withTransaction<T>(on: ServiceContext | Db, fn: (tx: Db) => Promise<T>): Promise<T> {
  const db = "deps" in on ? on.deps.db : on;
  return is(db, PgTransaction) ? fn(db) : transaction(db, fn);
}

/**
 * The free polling routes' refusal of a token that opens nothing (spec 4D rule 1): unknown, or
 * its onboarding is past its expiry. One answer for both, so tokens cannot be probed.
 */
export const staleSessionToken = (): AppError =>
  new AppError(
    "unauthorized",
    "This token is unknown or expired; start onboarding again with POST /x402/onboard.",
  );

/**
 * The permission a verb needs. An OAuth token without the scope for it is `insufficient_scope`
 * (403 with a challenge naming the scope): the remedy is to log in again and grant it, e.g. a
 * CLI profile made before the MCP scopes existed (spec 5.5).
 */
export function requirePermission(ctx: ServiceContext, permission: Permission): void {
  const actor = ctx.actor;
  if (actor.permissions.has(permission)) return;
  if (actor.type === "onboarding_session" && actor.expired) throw staleSessionToken();
  const oauth = "oauth" in actor ? actor.oauth : undefined;
  if (oauth) {
    const scope = scopeForPermission(oauth.resource, permission) ?? permission;
    throw new AppError(
      "insufficient_scope",
      `This access token lacks the scope ${scope}. Log in again to grant it (patchbay login, or reconnect your MCP client).`,
      { scope, requiredPermission: permission },
    );
  }
  throw new AppError("forbidden", `This credential lacks the permission ${permission}.`, {
    requiredPermission: permission,
  });
}

/** The calling member: what only a person or their credential may do (a wallet has no user). */
export function requireMember(ctx: ServiceContext): MemberActor {
  const actor = ctx.actor;
  if (actor.type === "api_key" || actor.type === "web_session" || actor.type === "oauth_token") return actor;
  throw new AppError("forbidden", "Only a member of this organisation may do this.");
}

/**
 * Management of an organisation's resources is for its owners and admins (spec 5.4), holding
 * the operation's permission when one is named (checked first).
 */
export function requireOwnerOrAdmin(ctx: ServiceContext, permission?: Permission): MemberActor {
  if (permission) requirePermission(ctx, permission);
  const actor = requireMember(ctx);
  if (actor.role !== "owner" && actor.role !== "admin") {
    throw new AppError("forbidden", "Only an owner or administrator of this organisation may do this.", {
      role: actor.role,
    });
  }
  return actor;
}
