import type { Command } from "commander";
import type { AuthInputValue, Connection } from "../../features/connections/schemas.ts";
import { usageError } from "./cli-error.ts";
import {
  addMcpOptions,
  addMutationOptions,
  type McpSession,
  type MutationFlags,
  mutationHeaders,
  openMcpSession,
} from "./mcp-session.ts";
import { connectionBlock } from "./mcp-view.ts";

type ConfigFlags = { displayName?: string; endpointUrl?: string; auth?: string; headerName?: string };
type CreateFlags = MutationFlags & ConfigFlags & { alias?: string };

const authKinds = ["none", "bearer", "api_key"] as const;

export function registerMcpWriteCommands(mcp: Command): void {
  addMcpOptions(
    mcp
      .command("create")
      .description("Create a connection (disabled, no credential, revision 1)")
      .option("--alias <alias>", "stable alias, 1–40 of a-z 0-9 _ - (required; immutable)")
      .option("--display-name <name>", "human-readable name (default: the alias)")
      .option("--endpoint-url <url>", "the server's MCP endpoint: public https, port 443 (required)")
      .option("--auth <kind>", "none | bearer | api_key (required)")
      .option("--header-name <name>", "the header that carries the key (with --auth api_key)")
      .option("--idempotency-key <key>", "Idempotency-Key to send (default: a new UUID, reported)"),
  ).action(async (flags: CreateFlags) => {
    const session = openMcpSession(flags);
    if (!flags.alias) throw usageError("--alias is required");
    if (!flags.endpointUrl) throw usageError("--endpoint-url is required");
    const auth = parseAuth(flags);
    if (!auth) throw usageError("--auth none|bearer|api_key is required");
    const key = session.idempotencyKey(flags);
    const connection = (await session.request({
      method: "POST",
      path: session.path(),
      headers: { "idempotency-key": key },
      body: {
        alias: flags.alias,
        displayName: flags.displayName ?? flags.alias,
        endpointUrl: flags.endpointUrl,
        auth,
      },
    })) as Connection;
    report(session, connection, `Created ${connection.id}.`);
  });

  addMutationOptions(
    mcp
      .command("update")
      .description("Change display name, endpoint or auth (endpoint/auth need a disabled connection)")
      .argument("<connection-id>", "e.g. mcp_…")
      .option("--display-name <name>", "new display name")
      .option(
        "--endpoint-url <url>",
        "new endpoint URL (approval goes stale; another origin drops the credential)",
      )
      .option(
        "--auth <kind>",
        "none | bearer | api_key (approval goes stale; a new kind drops the credential)",
      )
      .option("--header-name <name>", "the header that carries the key (with --auth api_key)"),
  ).action(async (id: string, flags: MutationFlags & ConfigFlags) => {
    const session = openMcpSession(flags, id);
    const revision = session.revision(flags);
    const auth = parseAuth(flags);
    const body = {
      ...(flags.displayName !== undefined ? { displayName: flags.displayName } : {}),
      ...(flags.endpointUrl !== undefined ? { endpointUrl: flags.endpointUrl } : {}),
      ...(auth ? { auth } : {}),
    };
    if (Object.keys(body).length === 0) {
      throw usageError(
        "nothing to update: give --display-name, --endpoint-url or --auth (the alias is immutable)",
      );
    }
    const connection = (await session.request({
      method: "PATCH",
      path: session.path(),
      headers: mutationHeaders(session.idempotencyKey(flags), revision),
      body,
    })) as Connection;
    report(session, connection, `Updated ${connection.id}.`);
  });

  for (const enabled of [true, false]) {
    addMutationOptions(
      mcp
        .command(enabled ? "enable" : "disable")
        .description(
          enabled
            ? "Enable a connection (needs a current approval and, if its auth needs one, a credential)"
            : "Disable a connection (new tasks stop receiving its tools; running tasks fail closed on their next call)",
        )
        .argument("<connection-id>", "e.g. mcp_…"),
    ).action(async (id: string, flags: MutationFlags) => {
      const session = openMcpSession(flags, id);
      const revision = session.revision(flags);
      const connection = (await session.request({
        method: "PUT",
        path: session.path("/enablement"),
        headers: mutationHeaders(session.idempotencyKey(flags), revision),
        body: { enabled },
      })) as Connection;
      report(session, connection, `${enabled ? "Enabled" : "Disabled"} ${connection.id}.`);
    });
  }
}

/** The connection as the API answered, or a summary line and its details. */
export function report(session: McpSession, connection: Connection, summary: string): void {
  if (session.json) session.printJson(connection);
  else session.print(`${summary}\n${connectionBlock(connection, session.style)}`);
}

function parseAuth(flags: ConfigFlags): AuthInputValue | undefined {
  if (flags.auth === undefined) {
    if (flags.headerName !== undefined) throw usageError("--header-name goes with --auth api_key");
    return undefined;
  }
  const kind = authKinds.find((k) => k === flags.auth);
  if (!kind) throw usageError(`--auth must be none, bearer or api_key (got "${flags.auth}")`);
  if (kind === "api_key") {
    if (!flags.headerName) throw usageError("--auth api_key needs --header-name <name>, e.g. X-Api-Key");
    return { kind, headerName: flags.headerName };
  }
  if (flags.headerName !== undefined) throw usageError("--header-name goes only with --auth api_key");
  return { kind };
}
