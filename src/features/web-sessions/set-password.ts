import { eq } from "drizzle-orm";
import { withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { users } from "../../platform/db/schema/users.ts";
import { assertPasswordAcceptable, hashPassword } from "./password.ts";
import { normalizeEmail } from "./sign-in.ts";
import { revokeUserSessions } from "./sign-out.ts";

/**
 * Sets a user's password (`patchbay admin set-password`): the operator's own act on the
 * database, like bootstrap, so it needs no actor. Every open session of the user ends, so a
 * reset also locks out whoever knew the old password.
 */
export async function setUserPassword(args: {
  db: Db;
  now: Date;
  input: { email: string; password: string };
}): Promise<{ userId: string; sessionsRevoked: number }> {
  assertPasswordAcceptable(args.input.password);
  const passwordHash = await hashPassword(args.input.password);
  const email = normalizeEmail(args.input.email);
  return withTransaction(args.db, async (tx) => {
    const [user] = await tx
      .update(users)
      .set({ passwordHash })
      .where(eq(users.email, email))
      .returning({ id: users.id });
    if (!user) throw new AppError("not_found", `No user has the email ${email}.`);
    const sessionsRevoked = await revokeUserSessions(tx, { userId: user.id, now: args.now });
    return { userId: user.id, sessionsRevoked };
  });
}
