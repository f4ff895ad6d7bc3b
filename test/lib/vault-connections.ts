import { sql } from "drizzle-orm";
import { newId, newUuid, randomToken } from "../../src/ids.ts";
import type { Db } from "../../src/platform/db/client.ts";
import { environments } from "../../src/platform/db/schema/environments.ts";
import { mcpConnections } from "../../src/platform/db/schema/mcp-connections.ts";
import { organizations } from "../../src/platform/db/schema/organizations.ts";
import type { CredentialScope } from "../../src/platform/vault/credential-store.ts";

// Shared by the vault's storage tests; not part of the vault's API.

/** Minimal rows for a connection to hang a credential on: a new org and env unless given. */
export async function seedConnection(
  db: Db,
  within: Partial<CredentialScope> = {},
): Promise<CredentialScope> {
  const organizationId = within.organizationId ?? newId("org");
  if (!within.organizationId)
    await db.insert(organizations).values({ id: organizationId, name: "Vault test" });
  const environmentId = within.environmentId ?? newUuid();
  if (!within.environmentId) {
    await db
      .insert(environments)
      .values({ id: environmentId, organizationId, name: `env-${randomToken(6)}` });
  }
  const connectionId = newId("mcp");
  await db.insert(mcpConnections).values({
    id: connectionId,
    organizationId,
    environmentId,
    alias: `conn-${randomToken(6)}`,
    displayName: "Vault test",
    endpointUrl: "https://mcp.example.test/mcp",
    endpointOrigin: "https://mcp.example.test",
    authKind: "bearer",
  });
  return { organizationId, environmentId, connectionId };
}

/** Every column of every vault_secrets row as the database's own text for it. */
export async function secretColumnTexts(db: Db): Promise<Array<{ column: string; text: string | null }>> {
  const result = await db.execute(
    sql`select c.key as "column", c.value as "text" from vault_secrets v, json_each_text(row_to_json(v)) c`,
  );
  const rows: unknown = Array.isArray(result) ? result : (result as { rows: unknown }).rows;
  return rows as Array<{ column: string; text: string | null }>;
}
