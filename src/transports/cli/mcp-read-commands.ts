import type { Command } from "commander";
import type { Connection } from "../../features/connections/schemas.ts";
import { usageError } from "./cli-error.ts";
import { addMcpOptions, type McpFlags, openMcpSession } from "./mcp-session.ts";
import { type ConnectionPage, connectionBlock, connectionTable } from "./mcp-view.ts";

type ListFlags = McpFlags & { pageSize?: string; cursor?: string; all?: boolean };

/** A safety stop for --all against a server whose cursors never end. */
const MAX_PAGES = 1000;

export function registerMcpReadCommands(mcp: Command): void {
  addMcpOptions(
    mcp
      .command("list")
      .description("List the environment's MCP connections with readiness and next step")
      .option("--page-size <n>", "connections per page, 1–200 (server default 50)")
      .option("--cursor <cursor>", "continue from a previous page's nextCursor")
      .option("--all", "follow nextCursor until the last page"),
  ).action(async (flags: ListFlags) => {
    const session = openMcpSession(flags);
    const pageSize = parsePageSize(flags.pageSize);
    if (flags.all && flags.cursor !== undefined)
      throw usageError("--all starts at the first page; drop --cursor");
    const fetchPage = async (cursor: string | undefined) =>
      (await session.request({
        method: "GET",
        path: session.path(),
        query: { pageSize, cursor },
      })) as ConnectionPage;

    let page = await fetchPage(flags.cursor);
    if (flags.all) {
      const items = [...page.items];
      for (let n = 1; page.nextCursor !== null && n < MAX_PAGES; n++) {
        page = await fetchPage(page.nextCursor);
        items.push(...page.items);
      }
      page = { items, nextCursor: page.nextCursor };
    }
    if (session.json) return session.printJson(page);
    session.print(connectionTable(page.items, session.style));
    if (page.nextCursor !== null) {
      session.info(`more connections: --cursor ${page.nextCursor} (or --all)`);
    }
  });

  addMcpOptions(
    mcp.command("get").description("Show one MCP connection").argument("<connection-id>", "e.g. mcp_…"),
  ).action(async (id: string, flags: McpFlags) => {
    const session = openMcpSession(flags, id);
    const connection = (await session.request({ method: "GET", path: session.path() })) as Connection;
    if (session.json) return session.printJson(connection);
    session.print(connectionBlock(connection, session.style));
  });
}

function parsePageSize(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < 1 || n > 200) throw usageError(`--page-size must be 1–200 (got "${raw}")`);
  return String(n);
}
