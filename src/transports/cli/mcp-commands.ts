import type { z } from "@hono/zod-openapi";
import type { Command } from "commander";
import type {
  AuthInputValue,
  Connection,
  DeletionPreviewSchema,
  Discovery,
} from "../../features/connections/schemas.ts";
import { CliError, exitCodes, usageError } from "./cli-error.ts";
import { keyValue, type Style, table, truncate, yesNo } from "./format.ts";
import {
  addEnvironmentGroup,
  collect,
  type EnvironmentSession,
  idempotencyKeyHelp,
  type OptionSpec,
  type Resource,
  type SessionFlags,
} from "./session.ts";
import { confirmOrStop, readSecretFromStdin, requireTerminalOrYes, startSpinner } from "./terminal.ts";

type ConfigFlags = SessionFlags & {
  displayName?: string;
  endpointUrl?: string;
  auth?: string;
  headerName?: string;
};

const connections: Resource = {
  group: "mcp",
  collection: "mcp-connections",
  item: ["<connection-id>", "e.g. mcp_…, or the connection's alias"],
  aliasField: "alias",
  idPrefix: "mcp_",
};
const authKinds = ["none", "bearer", "api_key"] as const;
const MAX_TOOLS_IN_HINT = 8;
const headerNameOption: OptionSpec = [
  "--header-name <name>",
  "the header that carries the key (with --auth api_key)",
];

/** `patchbay environment mcp …` (docs/cli.md): the MCP connections of one environment. */
export function registerMcpCommands(environment: Command): void {
  const { group: mcp, add } = addEnvironmentGroup(
    environment,
    connections,
    "Customer MCP server connections of one environment",
    {
      noun: "connections",
      description: "List the environment's MCP connections with readiness and next step",
      render: connectionTable,
    },
  );

  add({
    name: "get",
    description: "Show one MCP connection",
    item: true,
    run: async (session) => {
      const connection = (await session.request({ method: "GET", path: session.path() })) as Connection;
      session.show(connection, connectionBlock(connection, session.style));
    },
  });

  add<ConfigFlags & { alias?: string }>({
    name: "create",
    description: "Create a connection (disabled, no credential, revision 1)",
    options: [
      ["--alias <alias>", "stable alias, 1–40 of a-z 0-9 _ - (required; immutable)"],
      ["--display-name <name>", "human-readable name (default: the alias)"],
      ["--endpoint-url <url>", "the server's MCP endpoint: public https, port 443 (required)"],
      ["--auth <kind>", "none | bearer | api_key (required)"],
      headerNameOption,
      ["--idempotency-key <key>", idempotencyKeyHelp],
    ],
    run: async (session, flags) => {
      if (!flags.alias) throw usageError("--alias is required");
      if (!flags.endpointUrl) throw usageError("--endpoint-url is required");
      const auth = parseAuth(flags);
      if (!auth) throw usageError("--auth none|bearer|api_key is required");
      const { alias, endpointUrl, displayName = alias } = flags;
      const headers = { "idempotency-key": session.idempotencyKey() };
      const body = { alias, displayName, endpointUrl, auth };
      await change(session, "POST", "", body, (c) => `Created ${c.id}.`, headers);
    },
  });

  add<ConfigFlags>({
    name: "update",
    description: "Change display name, endpoint or auth (endpoint/auth need a disabled connection)",
    item: true,
    change: true,
    options: [
      ["--display-name <name>", "new display name"],
      ["--endpoint-url <url>", "new endpoint URL (approval goes stale; another origin drops the credential)"],
      ["--auth <kind>", "none | bearer | api_key (approval goes stale; a new kind drops the credential)"],
      headerNameOption,
    ],
    run: async (session, flags) => {
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
      await change(session, "PATCH", "", body, (c) => `Updated ${c.id}.`);
    },
  });

  for (const enabled of [true, false]) {
    add({
      name: enabled ? "enable" : "disable",
      description: enabled
        ? "Enable a connection (needs a current approval and, if its auth needs one, a credential)"
        : "Disable a connection (new tasks stop receiving its tools; running tasks fail closed on their next call)",
      item: true,
      change: true,
      run: async (session) => {
        session.revision();
        const summary = (c: Connection) => `${enabled ? "Enabled" : "Disabled"} ${c.id}.`;
        await change(session, "PUT", "/enablement", { enabled }, summary);
      },
    });
  }

  add({
    name: "discover",
    description: "List the server's tools for review (does not change the revision)",
    item: true,
    change: true,
    run: async (session) => {
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
        `approve with: patchbay environment mcp approve ${session.id} --environment ${session.environmentId} ` +
          `--revision ${revision} --discovery ${discovery.id} ${tools}`,
      );
    },
  });

  add<
    SessionFlags & { discovery?: string; tool?: string[]; allApprovable?: boolean; attestReadOnly?: string[] }
  >({
    name: "approve",
    description: "Approve tools of a discovery for the task agent (enabling is a separate step)",
    item: true,
    change: true,
    options: [
      ["--discovery <id>", "the discovery to approve from (dsc_…)"],
      ["--tool <name>", "a tool to approve; repeat for each", collect],
      [
        "--all-approvable",
        "run a fresh discovery and approve every approvable read tool of it (instead of --discovery); write tools only when named with --tool",
      ],
      [
        "--attest-read-only <name>",
        "attest that an approved tool only reads although its annotations do not say so (recorded in the audit trail); repeat for each",
        collect,
      ],
    ],
    run: async (session, flags) => {
      const revision = session.revision();
      const discoverCommand = `patchbay environment mcp discover ${session.id} --environment ${session.environmentId} --revision ${revision}`;
      let discoveryId = flags.discovery;
      const named = [...new Set(flags.tool)];
      const attestReadOnly = [...new Set(flags.attestReadOnly)];
      let toolNames = named;
      let leftOut: string[] = [];
      if (flags.allApprovable) {
        if (discoveryId !== undefined) {
          throw usageError("--all-approvable makes its own discovery; drop --discovery");
        }
        // Its own key: the same key on a different request is refused (idempotency_key_reused).
        const discovery = await discover(session, `${session.idempotencyKey()}:discover`);
        discoveryId = discovery.id;
        const approvable = discovery.tools.filter((t) => t.approvable);
        // Read tools, and write tools only when named or attested: approving a write tool is a
        // decision about each tool, never a side effect of "all".
        const chosen = (t: { name: string; access: string }) =>
          t.access === "read" || named.includes(t.name) || attestReadOnly.includes(t.name);
        toolNames = [...new Set([...approvable.filter(chosen).map((t) => t.name), ...named])];
        leftOut = approvable.filter((t) => !chosen(t)).map((t) => t.name);
        if (!session.json) {
          session.info(
            `discovered ${discoveryId}: ${discovery.tools.length} tools, ${approvable.length} approvable (${approvable.length - leftOut.length} chosen)`,
          );
        }
        if (toolNames.length === 0) {
          const detail = `discovery ${discoveryId} has no approvable read tools${leftOut.length ? `; write tools (name each with --tool): ${leftOut.join(", ")}` : ""}`;
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
      const summary = (c: Connection) => {
        const write = (c.approval?.tools ?? []).filter((t) => t.access === "write").map((t) => t.name);
        return [
          `Approved ${toolNames.length} tools of ${discoveryId}: ${toolNames.join(", ")}.`,
          ...(write.length
            ? [`Write tools (every call waits for an owner or admin to approve it): ${write.join(", ")}.`]
            : []),
          ...(leftOut.length
            ? [`Not approved, write tools (name each with --tool): ${leftOut.join(", ")}.`]
            : []),
        ].join("\n");
      };
      const body = { discoveryId, toolNames, ...(attestReadOnly.length ? { attestReadOnly } : {}) };
      await change(session, "POST", "/tool-approvals", body, summary);
    },
  });

  // The credential is read only from stdin: an argument or an environment variable would sit in
  // shell history, `ps` output and CI logs.
  const credential = mcp.command("credential").description("Write-only credential of a connection");
  add<SessionFlags & { stdin?: boolean }>(
    {
      name: "set",
      description: "Set or rotate the credential, read from stdin (checked against the server first)",
      item: true,
      change: true,
      options: [["--stdin", "read the credential from stdin (required; one trailing newline is dropped)"]],
      run: async (session, flags) => {
        if (!flags.stdin) {
          throw usageError(
            "credential set reads the credential only from stdin; pass --stdin",
            `printf '%s' "$TOKEN" | patchbay environment mcp credential set ${session.id} --environment ${session.environmentId} --revision <n> --stdin`,
          );
        }
        session.revision();
        const value = await readSecretFromStdin("credential");
        const summary = (c: Connection) =>
          `Credential set for ${c.id} (checked against the server; never shown again).`;
        await change(session, "PUT", "/credential", { value }, summary);
      },
    },
    credential,
  );

  add<SessionFlags & { yes?: boolean }>({
    name: "delete",
    description: "Preview the effects of deleting a disabled connection, confirm, then delete it",
    item: true,
    change: true,
    options: [["--yes", "delete without asking (required when stdin is not a terminal)"]],
    run: async (session, flags) => {
      const id = session.id;
      session.revision();
      // Refuse before previewing: a script without --yes must not half-run.
      requireTerminalOrYes(flags.yes);
      // The API deletes only a disabled connection: say so, with the command, before any preview
      // (a preview of a deletion that cannot happen would only mislead).
      const current = (await session.request({ method: "GET", path: session.path() })) as Connection;
      if (current.enabled) {
        throw new CliError(
          "connection_enabled",
          `${id} is enabled; disable it before deleting it`,
          exitCodes.conflict,
          `patchbay environment mcp disable ${id} --environment ${session.environmentId} --revision ${current.revision}`,
        );
      }
      const key = session.idempotencyKey();
      // The preview is a different request, so it gets its own key derived from the reported one.
      const preview = (await session.request({
        method: "POST",
        path: session.path("/deletion-previews"),
        headers: session.changeHeaders(`${key}:preview`),
      })) as z.infer<typeof DeletionPreviewSchema>;
      const e = preview.effects;
      const effects = `Deletion preview for ${id}:\n${keyValue([
        ["Approved tools removed", String(e.approvedToolCount)],
        ["Credential destroyed", yesNo(e.credentialDestroyed)],
        ["Running tasks affected", String(e.runningTasksAffected)],
        ["Receipt expires", preview.expiresAt],
      ])}`;
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
    },
  });
}

/**
 * Sends a change of the connection (by default with If-Match and the command's key) and shows the
 * connection as the API answered: a summary line and its details, or its JSON.
 */
async function change(
  session: EnvironmentSession,
  method: "PATCH" | "PUT" | "POST",
  suffix: string,
  body: unknown,
  summary: (connection: Connection) => string,
  headers: Record<string, string> = session.changeHeaders(),
): Promise<void> {
  const connection = (await session.request({
    method,
    path: session.path(suffix),
    headers,
    body,
  })) as Connection;
  session.show(connection, `${summary(connection)}\n${connectionBlock(connection, session.style)}`);
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

function readinessText(readiness: Connection["readiness"], style: Style): string {
  if (readiness === "ready") return style.green(readiness);
  return readiness === "disabled" ? style.dim(readiness) : style.yellow(readiness);
}

/**
 * What tasks' calls saw of the server (never part of readiness): the credential-rejected condition
 * first, then a run of failures, then the last success. `short` for a table cell.
 */
function healthText(h: Connection["health"], style: Style, short = false): string {
  if (h.credentialRejected) {
    return style.yellow(
      short ? "credential rejected" : `credential rejected since ${h.credentialRejectedAt}`,
    );
  }
  if (h.consecutiveFailures > 0) {
    const text = `${h.consecutiveFailures} failed in a row (${h.lastFailureCode ?? "?"})`;
    return style.yellow(short ? text : `${text}, last at ${h.lastFailureAt}`);
  }
  if (h.lastSuccessAt) return style.green(short ? "ok" : `ok, last call ${h.lastSuccessAt}`);
  return short ? "-" : "no calls yet";
}

function connectionTable(items: Connection[], style: Style): string {
  if (items.length === 0) return "No MCP connections in this environment.\n";
  return table(
    ["ID", "ALIAS", "READINESS", "HEALTH", "ENABLED", "REVISION", "NEXT STEP"],
    items.map((c) => [
      c.id,
      c.alias,
      readinessText(c.readiness, style),
      healthText(c.health, style, true),
      yesNo(c.enabled),
      String(c.revision),
      c.readiness === "ready" ? "" : c.nextStep,
    ]),
  );
}

/** The command that takes the connection's next step, when one command does. */
function nextCommand(c: Connection): string | undefined {
  const tail = `${c.id} --environment ${c.environmentId} --revision ${c.revision}`;
  switch (c.readiness) {
    case "credential_missing":
      return `patchbay environment mcp credential set ${tail} --stdin`;
    case "approval_missing":
    case "approval_stale":
      return `patchbay environment mcp discover ${tail}`;
    case "disabled":
      return `patchbay environment mcp enable ${tail}`;
    default:
      return undefined;
  }
}

function connectionBlock(c: Connection, style: Style): string {
  const auth = c.auth.kind === "api_key" ? `api_key (header ${c.auth.headerName ?? "?"})` : c.auth.kind;
  const credential =
    c.auth.kind === "none"
      ? "not needed"
      : c.auth.credentialReady
        ? `set${c.auth.credentialUpdatedAt ? ` ${c.auth.credentialUpdatedAt}` : ""}`
        : style.yellow("missing");
  const command = nextCommand(c);
  const next =
    c.readiness === "ready" ? c.nextStep : `${c.nextStep}${command ? `\n${style.dim(command)}` : ""}`;
  const discovery = c.discovery
    ? `${c.discovery.id} (${c.discovery.toolCount} tools, ${c.discovery.discoveredAt})`
    : "none";
  const write = (c.approval?.tools ?? []).filter((t) => t.access === "write").map((t) => t.name);
  const approval = c.approval
    ? `${c.approval.toolCount} tools (${c.approval.toolCount - write.length} read, ${write.length} write), ${c.approval.approvedAt} by ${c.approval.approvedByEmail ?? c.approval.approvedBy}${c.approval.stale ? style.yellow(" (stale)") : ""}`
    : "none";
  return keyValue([
    ["ID", c.id],
    ["Alias", c.alias],
    ["Display name", c.displayName],
    ["Environment", c.environmentId],
    ["Endpoint", c.endpointOrigin],
    ["Auth", auth],
    ["Credential", credential],
    ["Enabled", yesNo(c.enabled)],
    ["Readiness", readinessText(c.readiness, style)],
    ["Health", healthText(c.health, style)],
    ["Next step", next],
    ["Revision", String(c.revision)],
    ["Discovery", discovery],
    ["Approval", approval],
    ...(c.approval ? [["Approved tools", approvedTools(c.approval.tools, style)] as [string, string]] : []),
    ["Created", c.createdAt],
    ["Updated", c.updatedAt],
  ]);
}

/** One approved tool a line: its name and access (write in colour), attested read tools marked. */
function approvedTools(tools: NonNullable<Connection["approval"]>["tools"], style: Style): string {
  if (tools.length === 0) return "none";
  return tools
    .map((t) => {
      const access = t.access === "write" ? style.yellow("write") : t.attested ? "read (attested)" : "read";
      return `${t.name}  ${access}`;
    })
    .join("\n");
}

function discoveryText(d: Discovery, style: Style): string {
  const approvable = d.tools.filter((t) => t.approvable).length;
  const head = keyValue([
    ["Discovery", d.id],
    ["Discovered", d.discoveredAt],
    ["Manifest", d.manifestHash],
    ["Tools", `${d.tools.length} (${approvable} approvable)`],
  ]);
  if (d.tools.length === 0) return head;
  const rows = d.tools.map((t) => [
    t.name,
    t.approvable ? style.green("yes") : style.yellow("no"),
    t.access === "read" ? "read" : style.yellow("write"),
    hints(t.annotations),
    truncate(t.approvable ? (t.description ?? t.title ?? "") : `not approvable: ${t.reason ?? "?"}`, 60),
  ]);
  const legend =
    "read: the task agent may call it on its own. write: every call waits for an owner or admin to approve it.";
  return `${head}\n${table(["TOOL", "APPROVABLE", "ACCESS", "ANNOTATIONS", "DESCRIPTION"], rows)}\n${style.dim(legend)}`;
}

/** The hints a server set to true, shortest names first as MCP spells them; "-" for none. */
function hints(annotations: Record<string, unknown> | undefined): string {
  const set = ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"]
    .filter((name) => annotations?.[name] === true)
    .map((name) => name.replace(/Hint$/, ""));
  return set.length ? set.join(",") : "-";
}
