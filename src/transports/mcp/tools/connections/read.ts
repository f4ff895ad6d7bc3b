import { z } from "zod";
import { getConnection } from "../../../../features/connections/get-connection.ts";
import { listConnections } from "../../../../features/connections/list-connections.ts";
import { ConnectionSchema } from "../../../../features/connections/schemas.ts";
import { defineTool } from "../../tool.ts";
import { connectionNextStep, connectionRef, describeConnection, environmentId } from "./shared.ts";

export const listConnectionsTool = defineTool({
  name: "list_mcp_connections",
  title: "List MCP connections",
  description:
    "Lists the environment's MCP connections with their readiness and next step (same as GET /api/v1/environments/{environmentId}/mcp-connections). Paginated: pass nextCursor as cursor.",
  access: "read",
  input: {
    environmentId,
    pageSize: z
      .number()
      .int()
      .min(1)
      .max(200)
      .default(50)
      .describe("Connections per page, 1–200 (default 50)."),
    cursor: z
      .string()
      .max(512)
      .optional()
      .describe("nextCursor from the previous page; omit for the first page."),
  },
  output: {
    items: z.array(ConnectionSchema),
    nextCursor: z.string().nullable().describe("Pass as cursor for the next page; null on the last page."),
  },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  nextStep: connectionNextStep,
  async run(input, ctx) {
    const page = await listConnections({ ctx, input });
    const lines = page.items.map((c) => `- ${describeConnection(c)}`);
    const more = page.nextCursor ? `\nMore: call again with cursor ${page.nextCursor}.` : "";
    const head = `${page.items.length} connection(s) on this page.`;
    return { text: [head, ...lines].join("\n") + more, data: page };
  },
});

export const getConnectionTool = defineTool({
  name: "get_mcp_connection",
  title: "Get an MCP connection",
  description:
    "Reads one connection: its revision (needed by every change), readiness, next step, latest discovery and approval. The endpoint path and any credential are never shown.",
  access: "read",
  input: connectionRef,
  output: { connection: ConnectionSchema },
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  nextStep: connectionNextStep,
  async run(input, ctx) {
    const connection = await getConnection({ ctx, input });
    return { text: describeConnection(connection), data: { connection } };
  },
});
