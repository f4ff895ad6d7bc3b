// Test support: egress with the dev override for loopback MCP test servers, and a helper to
// catch the AppError a call fails with.

import { AppError } from "../../src/errors.ts";
import type { EgressPolicy } from "../../src/platform/egress/address-policy.ts";
import { createEgress, type Egress } from "../../src/platform/egress/egress-fetch.ts";
import { devPolicy } from "./egress-servers.ts";
import type { McpHttps } from "./mcp-https.ts";

/** Egress that may reach exactly these servers' ports (and trusts the first one's CA). */
export function egressTo(servers: McpHttps[], overrides: Partial<EgressPolicy> = {}): Egress {
  const [first] = servers;
  if (!first) throw new Error("egressTo needs at least one server");
  return createEgress(
    devPolicy(
      first.ca,
      servers.map((server) => server.port),
      overrides,
    ),
  );
}

/** The AppError `promise` rejects with; fails the test if it resolves or rejects otherwise. */
export async function rejection(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected a rejection");
}
