import { runNode } from "./processes.ts";

export type Tenant = { organizationId: string; environmentId: string; userId: string; apiKey: string };

/**
 * Runs `patchbay admin bootstrap --json` (migrations, then an organisation, owner, environment and
 * owner API key) against the database `env` configures, and returns what it printed.
 */
export async function bootstrapTenant(
  patchbayBin: string,
  env: NodeJS.ProcessEnv,
  signal?: AbortSignal,
  extraArgs: string[] = [],
): Promise<Tenant> {
  const out = await runNode([patchbayBin, "admin", "bootstrap", "--json", ...extraArgs], env, signal);
  const line = out.trim().split("\n").at(-1) ?? "";
  const parsed: unknown = JSON.parse(line);
  if (
    typeof parsed === "object" &&
    parsed !== null &&
    "organizationId" in parsed &&
    "environmentId" in parsed &&
    "userId" in parsed &&
    "apiKey" in parsed &&
    typeof parsed.organizationId === "string" &&
    typeof parsed.environmentId === "string" &&
    typeof parsed.userId === "string" &&
    typeof parsed.apiKey === "string"
  ) {
    const { organizationId, environmentId, userId, apiKey } = parsed;
    return { organizationId, environmentId, userId, apiKey };
  }
  throw new Error(`unexpected output from admin bootstrap: ${out}`);
}
