import { withTransaction } from "../../context.ts";
import { newId, newUuid, randomToken } from "../../ids.ts";
import { permissions } from "../../permissions.ts";
import { recordAuditAs } from "../../platform/audit/record-audit.ts";
import type { Db } from "../../platform/db/client.ts";
import { apiKeys } from "../../platform/db/schema/api-keys.ts";
import { environments } from "../../platform/db/schema/environments.ts";
import { organizations } from "../../platform/db/schema/organizations.ts";
import { memberships, users } from "../../platform/db/schema/users.ts";
import { generateApiKeySecret } from "../api-keys/index.ts";

export type BootstrapResult = {
  organizationId: string;
  environmentId: string;
  userId: string;
  apiKey: string;
};

/**
 * Creates a new organisation with an owner, an environment named `production` and an owner API
 * key carrying every permission. Used by `patchbay admin bootstrap` and the first-run demo; it
 * needs no actor because it is the operator's own act on the database. An existing user with the
 * same email becomes the owner of the new organisation too.
 */
export async function bootstrapOrganization(args: {
  db: Db;
  input: { organizationName?: string | undefined; email?: string | undefined };
}): Promise<BootstrapResult> {
  const email = (args.input.email ?? `owner-${randomToken(8)}@example.invalid`).trim().toLowerCase();
  const organizationName = args.input.organizationName?.trim() || "Demo organisation";
  return withTransaction(args.db, async (tx) => {
    const organizationId = newId("org");
    await tx.insert(organizations).values({ id: organizationId, name: organizationName });
    const [user] = await tx
      .insert(users)
      .values({ id: newId("usr"), email })
      .onConflictDoUpdate({ target: users.email, set: { email } })
      .returning({ id: users.id });
    if (!user) throw new Error("user upsert returned no row");
    await tx.insert(memberships).values({ organizationId, userId: user.id, role: "owner" });
    const environmentId = newUuid();
    await tx.insert(environments).values({ id: environmentId, organizationId, name: "production" });
    const key = generateApiKeySecret();
    const keyId = newId("key");
    await tx.insert(apiKeys).values({
      id: keyId,
      organizationId,
      userId: user.id,
      name: "Bootstrap owner key",
      prefix: key.prefix,
      secretHash: key.hash,
      permissions: [...permissions],
    });
    await recordAuditAs(tx, {
      organizationId,
      actor: { type: "system", id: "bootstrap" },
      channel: "system",
      action: "organization.bootstrapped",
      targetType: "organization",
      targetId: organizationId,
      details: { userId: user.id, environmentId, apiKeyId: keyId },
    });
    return { organizationId, environmentId, userId: user.id, apiKey: key.secret };
  });
}
