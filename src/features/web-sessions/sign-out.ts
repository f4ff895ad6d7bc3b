import { and, eq, isNull } from "drizzle-orm";
import type { Deps } from "../../deps.ts";
import type { Db } from "../../platform/db/client.ts";
import { webSessions } from "../../platform/db/schema/web-sessions.ts";
import { hashSessionSecret } from "./session-secret.ts";

/** Revokes the session behind a cookie secret; an unknown or already revoked one is a no-op. */
export async function signOut(args: {
  deps: Pick<Deps, "db" | "clock">;
  input: { secret: string };
}): Promise<void> {
  await args.deps.db
    .update(webSessions)
    .set({ revokedAt: args.deps.clock() })
    .where(
      and(eq(webSessions.secretHash, hashSessionSecret(args.input.secret)), isNull(webSessions.revokedAt)),
    );
}

/** Revokes every session of a user (their password changed, or an operator asked). */
export async function revokeUserSessions(db: Db, args: { userId: string; now: Date }): Promise<number> {
  const revoked = await db
    .update(webSessions)
    .set({ revokedAt: args.now })
    .where(and(eq(webSessions.userId, args.userId), isNull(webSessions.revokedAt)))
    .returning({ id: webSessions.id });
  return revoked.length;
}
