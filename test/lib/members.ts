import { randomBytes } from "node:crypto";
import type { createApp } from "../../src/app.ts";
import type { Deps } from "../../src/deps.ts";
import { generateApiKeySecret } from "../../src/features/api-keys/key-secret.ts";
import { permissions } from "../../src/permissions.ts";
import { apiKeys } from "../../src/platform/db/schema/api-keys.ts";
import { memberships } from "../../src/platform/db/schema/users.ts";
import { newTenant, type Tenant } from "../fixtures.ts";
import { type Client, client } from "../http.ts";

/** A key of a plain member (role `member`) of `owner`'s organisation, with every permission. */
export async function createMemberKey(
  deps: Deps,
  app: ReturnType<typeof createApp>,
  owner: Tenant,
): Promise<Client> {
  const other = await newTenant(deps, app);
  await deps.db
    .insert(memberships)
    .values({ organizationId: owner.organizationId, userId: other.userId, role: "member" });
  const secret = generateApiKeySecret();
  await deps.db.insert(apiKeys).values({
    id: `key_member_${randomBytes(6).toString("hex")}`,
    organizationId: owner.organizationId,
    userId: other.userId,
    name: "member",
    prefix: secret.prefix,
    secretHash: secret.hash,
    permissions: [...permissions],
  });
  return client(app, secret.secret);
}

/** A REST client for `userId` in `organizationId` (e.g. the human who claimed an agent's organisation). */
export async function keyFor(
  deps: Deps,
  app: ReturnType<typeof createApp>,
  member: { organizationId: string; userId: string },
): Promise<Client> {
  const secret = generateApiKeySecret();
  await deps.db.insert(apiKeys).values({
    id: `key_${randomBytes(6).toString("hex")}`,
    organizationId: member.organizationId,
    userId: member.userId,
    name: "operator",
    prefix: secret.prefix,
    secretHash: secret.hash,
    permissions: [...permissions],
  });
  return client(app, secret.secret);
}
