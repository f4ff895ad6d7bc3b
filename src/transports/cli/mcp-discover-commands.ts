import type { Command } from "commander";
import type { Connection, Discovery } from "../../features/connections/schemas.ts";
import { CliError, exitCodes, usageError } from "./cli-error.ts";
import {
  addMutationOptions,
  type McpSession,
  type MutationFlags,
  mutationHeaders,
  openMcpSession,
} from "./mcp-session.ts";
import { discoveryText } from "./mcp-view.ts";
import { report } from "./mcp-write-commands.ts";
import { startSpinner } from "./spinner.ts";

const MAX_TOOLS_IN_HINT = 8;

type ApproveFlags = MutationFlags & { discovery?: string; tool?: string[]; allApprovable?: boolean };

export function registerMcpDiscoverCommands(mcp: Command): void {
  addMutationOptions(
    mcp
      .command("discover")
      .description("List the server's tools for review (does not change the revision)")
      .argument("<connection-id>", "e.g. mcp_…"),
  ).action(async (id: string, flags: MutationFlags) => {
    const session = openMcpSession(flags, id);
    const revision = session.revision(flags);
    const discovery = await discover(session, session.idempotencyKey(flags), revision);
    if (session.json) return session.printJson(discovery);
    session.print(discoveryText(discovery, session.style));
    const approvable = discovery.tools.filter((t) => t.approvable).map((t) => t.name);
    if (approvable.length > 0) {
      // Name the tools while the line stays readable; past that, the selection is the user's.
      const tools =
        approvable.length <= MAX_TOOLS_IN_HINT
          ? approvable.map((n) => `--tool ${n}`).join(" ")
          : "--tool <name> … (or --all-approvable instead of --discovery)";
      session.info(
        `approve with: patchbay environment mcp approve ${id} --environment ${session.environmentId} ` +
          `--revision ${revision} --discovery ${discovery.id} ${tools}`,
      );
    }
  });

  addMutationOptions(
    mcp
      .command("approve")
      .description("Approve tools of a discovery for the task agent (enabling is a separate step)")
      .argument("<connection-id>", "e.g. mcp_…")
      .option("--discovery <id>", "the discovery to approve from (dsc_…)")
      .option(
        "--tool <name>",
        "a tool to approve; repeat for each",
        (name: string, all: string[] | undefined) => [...(all ?? []), name],
      )
      .option(
        "--all-approvable",
        "run a fresh discovery and approve every approvable tool of it (instead of --discovery/--tool)",
      ),
  ).action(async (id: string, flags: ApproveFlags) => {
    const session = openMcpSession(flags, id);
    const revision = session.revision(flags);
    let discoveryId: string;
    let toolNames: string[];
    const tools = flags.tool ?? [];
    if (flags.allApprovable) {
      if (flags.discovery !== undefined || tools.length > 0) {
        throw usageError("--all-approvable makes its own discovery; drop --discovery and --tool");
      }
      const key = session.idempotencyKey(flags);
      // Its own key: the same key on a different request is refused (idempotency_key_reused).
      const discovery = await discover(session, `${key}:discover`, revision);
      toolNames = discovery.tools.filter((t) => t.approvable).map((t) => t.name);
      discoveryId = discovery.id;
      if (!session.json) {
        session.info(
          `discovered ${discovery.id}: ${discovery.tools.length} tools, ${toolNames.length} approvable`,
        );
      }
      if (toolNames.length === 0) {
        throw new CliError(
          "nothing_to_approve",
          `discovery ${discovery.id} has no approvable tools`,
          exitCodes.other,
          `see why: patchbay environment mcp discover ${id} --environment ${session.environmentId} --revision ${revision}`,
        );
      }
    } else {
      if (flags.discovery === undefined) {
        throw usageError(
          "--discovery <id> is required (or --all-approvable)",
          `discover first: patchbay environment mcp discover ${id} --environment ${session.environmentId} --revision ${revision}`,
        );
      }
      if (tools.length === 0) throw usageError("give at least one --tool <name> (or --all-approvable)");
      discoveryId = flags.discovery;
      toolNames = [...new Set(tools)];
    }
    const connection = (await session.request({
      method: "POST",
      path: session.path("/tool-approvals"),
      headers: mutationHeaders(session.idempotencyKey(flags), revision),
      body: { discoveryId, toolNames },
    })) as Connection;
    report(
      session,
      connection,
      `Approved ${toolNames.length} tools of ${discoveryId}: ${toolNames.join(", ")}.`,
    );
  });
}

async function discover(session: McpSession, key: string, revision: number): Promise<Discovery> {
  const stop = startSpinner(
    process.stderr,
    `discovering tools of ${session.connectionId ?? "the connection"}…`,
  );
  try {
    return (await session.request({
      method: "POST",
      path: session.path("/discoveries"),
      headers: mutationHeaders(key, revision),
    })) as Discovery;
  } finally {
    stop();
  }
}
