import type { Command } from "commander";
import type { AuthInputValue, Connection, Discovery } from "../../features/connections/schemas.ts";
import { CliError, exitCodes, usageError } from "./cli-error.ts";
import {
  connectionBlock,
  connectionTable,
  type DeletionPreview,
  discoveryText,
  previewText,
} from "./mcp-view.ts";
import {
  addEnvironmentOptions,
  addListCommand,
  collect,
  type EnvironmentSession,
  idempotencyKeyHelp,
  openEnvironmentSession,
  type SessionFlags,
} from "./session.ts";
import { confirmOrStop, readSecretFromStdin, requireTerminalOrYes, startSpinner } from "./terminal.ts";

type ApproveFlags = SessionFlags & { discovery?: string; tool?: string[]; allApprovable?: boolean };
type ConfigFlags = SessionFlags & {
  displayName?: string;
  endpointUrl?: string;
  auth?: string;
  headerName?: string;
};

const connections = { group: "mcp", collection: "mcp-connections" };
const authKinds = ["none", "bearer", "api_key"] as const;
const MAX_TOOLS_IN_HINT = 8;

const open = (flags: SessionFlags, id?: string) => openEnvironmentSession(flags, connections, id);

/** `patchbay environment mcp …` (docs/cli.md): the MCP connections of one environment. */
export function registerMcpCommands(environment: Command): void {
  const mcp = environment
    .command("mcp")
    .description(
      "Customer MCP server connections of one environment (--environment <uuid> on every command)",
    );
  const about = (name: string, description: string) =>
    mcp.command(name).description(description).argument("<connection-id>", "e.g. mcp_…");

  addListCommand(
    mcp,
    connections,
    "connections",
    "List the environment's MCP connections with readiness and next step",
    connectionTable,
  );

  addEnvironmentOptions(about("get", "Show one MCP connection")).action(
    async (id: string, flags: SessionFlags) => {
      const session = open(flags, id);
      const connection = (await session.request({ method: "GET", path: session.path() })) as Connection;
      session.show(connection, connectionBlock(connection, session.style));
    },
  );

  addEnvironmentOptions(
    mcp
      .command("create")
      .description("Create a connection (disabled, no credential, revision 1)")
      .option("--alias <alias>", "stable alias, 1–40 of a-z 0-9 _ - (required; immutable)")
      .option("--display-name <name>", "human-readable name (default: the alias)")
      .option("--endpoint-url <url>", "the server's MCP endpoint: public https, port 443 (required)")
      .option("--auth <kind>", "none | bearer | api_key (required)")
      .option("--header-name <name>", "the header that carries the key (with --auth api_key)")
      .option("--idempotency-key <key>", idempotencyKeyHelp),
  ).action(async (flags: ConfigFlags & { alias?: string }) => {
    const session = open(flags);
    if (!flags.alias) throw usageError("--alias is required");
    if (!flags.endpointUrl) throw usageError("--endpoint-url is required");
    const auth = parseAuth(flags);
    if (!auth) throw usageError("--auth none|bearer|api_key is required");
    const { alias, endpointUrl, displayName = alias } = flags;
    const headers = { "idempotency-key": session.idempotencyKey() };
    const connection = await change(session, "POST", "", { alias, displayName, endpointUrl, auth }, headers);
    report(session, connection, `Created ${connection.id}.`);
  });

  addEnvironmentOptions(
    about("update", "Change display name, endpoint or auth (endpoint/auth need a disabled connection)")
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
    true,
  ).action(async (id: string, flags: ConfigFlags) => {
    const session = open(flags, id);
    session.revision();
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
    const connection = await change(session, "PATCH", "", body);
    report(session, connection, `Updated ${connection.id}.`);
  });

  for (const enabled of [true, false]) {
    addEnvironmentOptions(
      about(
        enabled ? "enable" : "disable",
        enabled
          ? "Enable a connection (needs a current approval and, if its auth needs one, a credential)"
          : "Disable a connection (new tasks stop receiving its tools; running tasks fail closed on their next call)",
      ),
      true,
    ).action(async (id: string, flags: SessionFlags) => {
      const session = open(flags, id);
      session.revision();
      const connection = await change(session, "PUT", "/enablement", { enabled });
      report(session, connection, `${enabled ? "Enabled" : "Disabled"} ${connection.id}.`);
    });
  }

  addEnvironmentOptions(
    about("discover", "List the server's tools for review (does not change the revision)"),
    true,
  ).action(async (id: string, flags: SessionFlags) => {
    const session = open(flags, id);
    const revision = session.revision();
    const discovery = await discover(session, session.idempotencyKey());
    if (session.json) return session.printJson(discovery);
    session.print(discoveryText(discovery, session.style));
    const approvable = discovery.tools.filter((t) => t.approvable).map((t) => t.name);
    if (approvable.length === 0) return;
    // Name the tools while the line stays readable; past that, the selection is the user's.
    const tools =
      approvable.length <= MAX_TOOLS_IN_HINT
        ? approvable.map((n) => `--tool ${n}`).join(" ")
        : "--tool <name> … (or --all-approvable instead of --discovery)";
    session.info(
      `approve with: patchbay environment mcp approve ${id} --environment ${session.environmentId} ` +
        `--revision ${revision} --discovery ${discovery.id} ${tools}`,
    );
  });

  addEnvironmentOptions(
    about("approve", "Approve tools of a discovery for the task agent (enabling is a separate step)")
      .option("--discovery <id>", "the discovery to approve from (dsc_…)")
      .option("--tool <name>", "a tool to approve; repeat for each", collect)
      .option(
        "--all-approvable",
        "run a fresh discovery and approve every approvable tool of it (instead of --discovery/--tool)",
      ),
    true,
  ).action(async (id: string, flags: ApproveFlags) => {
    const session = open(flags, id);
    const revision = session.revision();
    const discoverCommand = `patchbay environment mcp discover ${id} --environment ${session.environmentId} --revision ${revision}`;
    let discoveryId = flags.discovery;
    let toolNames = [...new Set(flags.tool)];
    if (flags.allApprovable) {
      if (discoveryId !== undefined || toolNames.length > 0) {
        throw usageError("--all-approvable makes its own discovery; drop --discovery and --tool");
      }
      // Its own key: the same key on a different request is refused (idempotency_key_reused).
      const discovery = await discover(session, `${session.idempotencyKey()}:discover`);
      discoveryId = discovery.id;
      toolNames = discovery.tools.filter((t) => t.approvable).map((t) => t.name);
      if (!session.json) {
        session.info(
          `discovered ${discoveryId}: ${discovery.tools.length} tools, ${toolNames.length} approvable`,
        );
      }
      if (toolNames.length === 0) {
        const detail = `discovery ${discoveryId} has no approvable tools`;
        throw new CliError("nothing_to_approve", detail, exitCodes.other, `see why: ${discoverCommand}`);
      }
    } else if (discoveryId === undefined) {
      throw usageError(
        "--discovery <id> is required (or --all-approvable)",
        `discover first: ${discoverCommand}`,
      );
    } else if (toolNames.length === 0) {
      throw usageError("give at least one --tool <name> (or --all-approvable)");
    }
    const connection = await change(session, "POST", "/tool-approvals", { discoveryId, toolNames });
    report(
      session,
      connection,
      `Approved ${toolNames.length} tools of ${discoveryId}: ${toolNames.join(", ")}.`,
    );
  });

  // The credential is read only from stdin: an argument or an environment variable would sit in
  // shell history, `ps` output and CI logs.
  addEnvironmentOptions(
    mcp
      .command("credential")
      .description("Write-only credential of a connection")
      .command("set")
      .description("Set or rotate the credential, read from stdin (checked against the server first)")
      .argument("<connection-id>", "e.g. mcp_…")
      .option("--stdin", "read the credential from stdin (required; one trailing newline is dropped)"),
    true,
  ).action(async (id: string, flags: SessionFlags & { stdin?: boolean }) => {
    const session = open(flags, id);
    if (!flags.stdin) {
      throw usageError(
        "credential set reads the credential only from stdin; pass --stdin",
        `printf '%s' "$TOKEN" | patchbay environment mcp credential set ${id} --environment ${session.environmentId} --revision <n> --stdin`,
      );
    }
    session.revision();
    const connection = await change(session, "PUT", "/credential", {
      value: await readSecretFromStdin("credential"),
    });
    report(
      session,
      connection,
      `Credential set for ${connection.id} (checked against the server; never shown again).`,
    );
  });

  addEnvironmentOptions(
    about("delete", "Preview the effects of deleting a disabled connection, confirm, then delete it").option(
      "--yes",
      "delete without asking (required when stdin is not a terminal)",
    ),
    true,
  ).action(async (id: string, flags: SessionFlags & { yes?: boolean }) => {
    const session = open(flags, id);
    session.revision();
    // Refuse before previewing: a script without --yes must not half-run.
    requireTerminalOrYes(flags.yes);
    const key = session.idempotencyKey();
    // The preview is a different request, so it gets its own key derived from the reported one.
    const preview = (await session.request({
      method: "POST",
      path: session.path("/deletion-previews"),
      headers: session.changeHeaders(`${key}:preview`),
    })) as DeletionPreview;
    const effects = `Deletion preview for ${id}:\n${previewText(preview)}`;
    if (!session.json) session.print(effects);
    else if (!flags.yes) process.stderr.write(effects); // the prompt must not ask blind
    await confirmOrStop(flags.yes, `Delete ${id}?`, `${id} was not deleted`);
    await session.request({
      method: "DELETE",
      path: session.path(),
      headers: { ...session.changeHeaders(key), "deletion-receipt": preview.receipt },
    });
    // DELETE answers 204; the JSON mode reports what was deleted and what it took along.
    session.show({ id, deleted: true, effects: preview.effects }, `Deleted ${id}.\n`);
  });
}

/** Sends a change of the connection, by default with If-Match and the command's key. */
async function change(
  session: EnvironmentSession,
  method: "PATCH" | "PUT" | "POST",
  suffix: string,
  body: unknown,
  headers: Record<string, string> = session.changeHeaders(),
) {
  return (await session.request({ method, path: session.path(suffix), headers, body })) as Connection;
}

/** The connection as the API answered: a summary line and its details, or its JSON. */
function report(session: EnvironmentSession, connection: Connection, summary: string): void {
  session.show(connection, `${summary}\n${connectionBlock(connection, session.style)}`);
}

async function discover(session: EnvironmentSession, key: string): Promise<Discovery> {
  const stop = startSpinner(process.stderr, `discovering tools of ${session.id ?? "the connection"}…`);
  try {
    return (await session.request({
      method: "POST",
      path: session.path("/discoveries"),
      headers: session.changeHeaders(key),
    })) as Discovery;
  } finally {
    stop();
  }
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
