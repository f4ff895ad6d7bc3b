import { and, eq, isNull } from "drizzle-orm";
import { withTransaction } from "../../context.ts";
import { newId } from "../../ids.ts";
import type { Db } from "../../platform/db/client.ts";
import { webSessions } from "../../platform/db/schema/web-sessions.ts";
import { SESSION_ABSOLUTE_MS } from "./session-policy.ts";
import { hashSessionSecret, newSessionSecret } from "./session-secret.ts";

export type StartedWebSession = { id: string; secret: string; expiresAt: Date };

/**
 * Opens a new session for a user who just proved who they are (password, invitation). A session
 * the browser already held is revoked in the same transaction: every sign-in gets a fresh secret,
 * so a secret planted in a browser before sign-in (session fixation) is worth nothing after it.
 */
export async function startWebSession(
  db: Db,
  args: { userId: string; now: Date; replacing?: string | undefined },
): Promise<StartedWebSession> {
  const { secret, hash } = newSessionSecret();
  const id = newId("wss");
  const expiresAt = new Date(args.now.getTime() + SESSION_ABSOLUTE_MS);
  await withTransaction(db, async (tx) => {
    if (args.replacing) {
      await tx
        .update(webSessions)
        .set({ revokedAt: args.now })
        .where(
          and(eq(webSessions.secretHash, hashSessionSecret(args.replacing)), isNull(webSessions.revokedAt)),
        );
    }
    await tx.insert(webSessions).values({
      id,
      userId: args.userId,
      secretHash: hash,
      createdAt: args.now,
      lastSeenAt: args.now,
      expiresAt,
    });
  });
  return { id, secret, expiresAt };
}
