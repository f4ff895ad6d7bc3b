import type { Db } from "./db/client.ts";
import type { Role } from "./db/schema/users.ts";
import type { Deps } from "./deps.ts";
import { AppError } from "./errors.ts";
import type { Permission } from "./features/api-keys/permissions.ts";

/**
 * Who is calling: an API key (`id` is the key's id) or a person signed in to the web UI (`id` is
 * the web session's id, its role read live from the membership). OAuth tokens and wallet
 * principals join this union later. Audit rows name the type and id.
 */
export type Actor = {
  type: "api_key" | "web_session";
  id: string;
  userId: string;
  organizationId: string;
  role: Role;
  permissions: ReadonlySet<Permission>;
};

export type ServiceContext = {
  deps: Deps;
  actor: Actor;
  requestId: string;
  idempotencyKey?: string | undefined;
};

export function withTransaction<T>(ctx: ServiceContext, fn: (tx: Db) => Promise<T>): Promise<T> {
  return ctx.deps.db.transaction((tx) => fn(tx as unknown as Db));
}

export function requirePermission(ctx: ServiceContext, permission: Permission): void {
  if (!ctx.actor.permissions.has(permission)) {
    throw new AppError("forbidden", `This credential lacks the permission ${permission}.`, {
      requiredPermission: permission,
    });
  }
}

/** Management of an organisation's resources is for its owners and admins (spec 5.4). */
export function requireOwnerOrAdmin(ctx: ServiceContext): void {
  if (ctx.actor.role !== "owner" && ctx.actor.role !== "admin") {
    throw new AppError("forbidden", "Only an owner or administrator of this organisation may do this.", {
      role: ctx.actor.role,
    });
  }
}
