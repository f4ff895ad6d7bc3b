import { AppError } from "../../../../errors.ts";
import { createConnection } from "../../../../features/connections/create-connection.ts";
import { ConnectionSchema, CreateConnectionBody } from "../../../../features/connections/schemas.ts";
import { updateConnection } from "../../../../features/connections/update-connection.ts";
import { defineTool } from "../../tool.ts";
import { connectionNextStep, connectionRef, describeConnection, environmentId, revision } from "./shared.ts";

// The REST body's own field schemas, so MCP validates exactly like REST.
const fields = CreateConnectionBody.shape;
const auth = fields.auth.describe(
  'How patchbay authenticates to the server: {"kind":"none"}, {"kind":"bearer"} or {"kind":"api_key","headerName":"X-Api-Key"}. The credential itself is never given here; attach it with the patchbay CLI or the REST API afterwards.',
);
const displayName = fields.displayName.describe("Human-readable name, one line, up to 100 characters.");
const endpointUrl = fields.endpointUrl.describe(
  "The server's MCP Streamable HTTP URL: public https://, port 443, no query, fragment, credentials or redirect. Only its origin is shown back.",
);

export const createConnectionTool = defineTool({
  name: "create_mcp_connection",
  title: "Create an MCP connection",
  description:
    "Creates a connection to a remote MCP server in the environment: disabled, without credential, revision 1. Does not contact the server; discover_mcp_connection_tools does.",
  access: "write",
  input: {
    environmentId,
    alias: fields.alias.describe(
      "Stable alias, unique in the environment and immutable: 1–40 of a-z 0-9 _ -, starting with a letter or digit.",
    ),
    displayName,
    endpointUrl,
    auth,
  },
  output: { connection: ConnectionSchema },
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  nextStep: connectionNextStep,
  async run(input, ctx) {
    const connection = await createConnection({ ctx, input });
    return { text: `Created ${describeConnection(connection)}`, data: { connection } };
  },
});

export const updateConnectionTool = defineTool({
  name: "update_mcp_connection",
  title: "Update an MCP connection",
  description:
    "Changes displayName, endpointUrl or auth (alias is immutable). Changing endpointUrl or auth needs a disabled connection and makes the approval stale; changing the auth kind, or moving to another origin, destroys the stored credential.",
  access: "write",
  input: {
    ...connectionRef,
    revision,
    displayName: displayName.optional(),
    endpointUrl: endpointUrl.optional(),
    auth: auth.optional(),
  },
  output: { connection: ConnectionSchema },
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
  nextStep: connectionNextStep,
  async run(input, ctx) {
    if (input.displayName === undefined && input.endpointUrl === undefined && input.auth === undefined) {
      throw new AppError(
        "invalid_request",
        "Give at least one of displayName, endpointUrl, auth (alias is immutable).",
      );
    }
    const connection = await updateConnection({ ctx, input });
    return { text: `Updated ${describeConnection(connection)}`, data: { connection } };
  },
});
