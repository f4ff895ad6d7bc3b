import { approveConnectionTools } from "../../../../features/connections/approve-connection-tools.ts";
import { discoverConnectionTools } from "../../../../features/connections/discover-connection-tools.ts";
import {
  ApproveBody,
  ConnectionSchema,
  DiscoverySchema,
  EnablementBody,
} from "../../../../features/connections/schemas.ts";
import { setConnectionEnabled } from "../../../../features/connections/set-connection-enabled.ts";
import { defineTool } from "../../tool.ts";
import { connectionNextStep, connectionRef, describeConnection, revision } from "./shared.ts";

/** Names shown in a discovery's text line; the full list is in the structured result. */
const LISTED_NAMES = 50;

export const discoverConnectionToolsTool = defineTool({
  name: "discover_mcp_connection_tools",
  title: "Discover a connection's tools",
  description:
    "Connects to the remote server (through patchbay's protected egress) and lists its tools for review: name, description, schemas, annotations, and whether each can be approved. Stores the result as a discovery; does not change the revision.",
  access: "write",
  input: { ...connectionRef, revision },
  output: { discovery: DiscoverySchema },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  nextStep: connectionNextStep,
  async run(input, ctx) {
    const discovery = await discoverConnectionTools({ ctx, input });
    const names = discovery.tools
      .slice(0, LISTED_NAMES)
      .map((t) => (t.approvable ? t.name : `${t.name} (not approvable: ${t.reason ?? "refused"})`));
    const more =
      discovery.tools.length > LISTED_NAMES ? `, … ${discovery.tools.length - LISTED_NAMES} more` : "";
    const text =
      `Discovered ${discovery.tools.length} tool(s), discoveryId ${discovery.id}: ${names.join(", ")}${more}. ` +
      `Next: approve_mcp_connection_tools with this discoveryId, the chosen toolNames and revision ${input.revision}.`;
    return { text, data: { discovery } };
  },
});

export const approveConnectionToolsTool = defineTool({
  name: "approve_mcp_connection_tools",
  title: "Approve a connection's tools",
  description:
    "Approves 1–128 approvable tools of a discovery made under the connection's current configuration; the approval replaces any previous one. Approval does not enable the connection.",
  access: "write",
  input: {
    ...connectionRef,
    revision,
    discoveryId: ApproveBody.shape.discoveryId.describe(
      "The discovery's id (`dsc_…`) from discover_mcp_connection_tools.",
    ),
    toolNames: ApproveBody.shape.toolNames.describe(
      "Names of the tools to approve, from that discovery (approvable ones only).",
    ),
  },
  output: { connection: ConnectionSchema },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  nextStep: connectionNextStep,
  async run(input, ctx) {
    const connection = await approveConnectionTools({ ctx, input });
    const count = connection.approval?.toolCount ?? 0;
    return { text: `Approved ${count} tool(s). ${describeConnection(connection)}`, data: { connection } };
  },
});

export const setConnectionEnabledTool = defineTool({
  name: "set_mcp_connection_enabled",
  title: "Enable or disable an MCP connection",
  description:
    "Enables or disables a connection. Enabling needs a current approval, a credential when the auth kind needs one, and room under the environment's limits (8 ready connections, 64 ready tools). New tasks see the change; running tasks fail closed when they next call a changed connection.",
  access: "write",
  input: {
    ...connectionRef,
    revision,
    enabled: EnablementBody.shape.enabled.describe("true to enable, false to disable."),
  },
  output: { connection: ConnectionSchema },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  nextStep: connectionNextStep,
  async run(input, ctx) {
    const connection = await setConnectionEnabled({ ctx, input });
    return { text: describeConnection(connection), data: { connection } };
  },
});
