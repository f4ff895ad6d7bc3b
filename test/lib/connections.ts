// Test support (not imported by the service): connections made through the REST API.
import { expect } from "vitest";
import type { Connection } from "../../src/features/connections/schemas.ts";
import type { Client } from "../http.ts";

/**
 * A new connection (auth none, at revision 1) in `environmentId`, as `POST …/mcp-connections`
 * answers it. `endpointUrl` defaults to a host named after the alias (never called).
 */
export async function createConnection(
  api: Client,
  environmentId: string,
  alias: string,
  endpointUrl = `https://${alias}.example.com/mcp`,
): Promise<Connection> {
  const res = await api.post(`/environments/${environmentId}/mcp-connections`, {
    alias,
    displayName: alias,
    endpointUrl,
    auth: { kind: "none" },
  });
  expect(res.status).toBe(201);
  return (await res.json()) as Connection;
}
