import { is } from "drizzle-orm";
import { PgTransaction } from "drizzle-orm/pg-core";
import type { Actor } from "./actor.ts";
import type { Deps } from "./deps.ts";
import { AppError } from "./errors.ts";
import { scopeForPermission } from "./oauth-resources.ts";
import type { Permission } from "./permissions.ts";
import type { Db } from "./platform/db/client.ts";

export type ServiceContext = {
  deps: Deps;
  actor: Actor;
  requestId: string;
  idempotencyKey?: string | undefined;
};

/**
 * Runs `fn` atomically: in a new transaction on a database handle, or in the open one when `on`
 * already is a transaction (or a context whose `db` is). A verb called from inside another's
 * transaction joins it rather than taking a savepoint: its writes and the caller's audit row and
 * job enqueues commit together or not at all, and no caller needs to survive the inner part's
 * failure while committing the rest (one that does opens its savepoint itself: `tx.transaction`).
 * Joining also spares PostgreSQL the two round trips of SAVEPOINT and RELEASE.
 */
export function withTransaction<T>(on: ServiceContext | Db, fn: (tx: Db) => Promise<T>): Promise<T> {
  const db = "deps" in on ? on.deps.db : on;
  return is(db, PgTransaction) ? fn(db) : db.transaction(fn);
}

/**
 * The permission a verb needs. An OAuth token without the scope for it is `insufficient_scope`
 * (403 with a challenge naming the scope): the remedy is to log in again and grant it, e.g. a
 * CLI profile made before the MCP scopes existed (spec 5.5).
 */
export function requirePermission(ctx: ServiceContext, permission: Permission): void {
  if (ctx.actor.permissions.has(permission)) return;
  const oauth = ctx.actor.oauth;
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

/** Management of an organisation's resources is for its owners and admins (spec 5.4). */
export function requireOwnerOrAdmin(ctx: ServiceContext): void {
  if (ctx.actor.role !== "owner" && ctx.actor.role !== "admin") {
    throw new AppError("forbidden", "Only an owner or administrator of this organisation may do this.", {
      role: ctx.actor.role,
    });
  }
}
