import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { z } from "zod";
import { AppError } from "../../errors.ts";
import type { ToolDefinition } from "../db/schema/mcp-connections.ts";
import { discoveryLimitExceeded, MAX_PAGES, MAX_TOOLS } from "./bounds.ts";

// Kept by reference, never rebuilt key by key: a copy could drop or reinterpret keys such as
// "__proto__", and what is hashed must be what the server sent.
const jsonObject = z.custom<Record<string, unknown>>(
  (value) => typeof value === "object" && value !== null && !Array.isArray(value),
  { message: "expected a JSON object" },
);

// Deliberately looser than the SDK's ListToolsResultSchema (which rejects the whole page for
// one tool whose inputSchema is not `type: "object"`): structure is checked here, the bounds
// per tool by assessTool, so one odd tool is listed as not approvable instead of failing all.
// `null` is accepted for optional fields and read as absent.
const toolEntry = z.object({
  name: z.string(),
  title: z.string().nullish(),
  description: z.string().nullish(),
  inputSchema: jsonObject,
  outputSchema: jsonObject.nullish(),
  annotations: jsonObject.nullish(),
});

const page = z.object({ tools: z.array(z.unknown()), nextCursor: z.string().nullish() });

const anyResult = z.unknown();

/**
 * `tools/list` across every page, within MAX_PAGES and MAX_TOOLS (checked as each page
 * arrives, so a hostile server cannot make us hold more than one page past a bound), handing
 * each page to `onPage` in order. The next page is requested before `onPage` runs, so the
 * caller's CPU work (assessing, hashing) overlaps the network instead of adding to it.
 * An empty or absent `nextCursor` ends the listing; a server that keeps answering with a
 * cursor runs into MAX_PAGES (page MAX_PAGES + 1 is never requested).
 */
export async function forEachToolPage(
  client: Client,
  host: string,
  onPage: (tools: ToolDefinition[]) => void,
): Promise<void> {
  let listed = 0;
  let pending = requestPage(client, undefined);
  for (let pageNumber = 1; ; pageNumber++) {
    const parsed = page.safeParse(await pending);
    if (!parsed.success) throw malformed(host, pageNumber, parsed.error.issues[0]?.path ?? []);
    listed += parsed.data.tools.length;
    if (listed > MAX_TOOLS) {
      throw discoveryLimitExceeded("tools", MAX_TOOLS, listed, `${host} lists more than ${MAX_TOOLS} tools.`);
    }
    const tools = parsed.data.tools.map((entry, index) => {
      const tool = toolEntry.safeParse(entry);
      if (!tool.success)
        throw malformed(host, pageNumber, ["tools", index, ...(tool.error.issues[0]?.path ?? [])]);
      return definition(tool.data);
    });
    const cursor = parsed.data.nextCursor || undefined;
    if (cursor !== undefined) {
      if (pageNumber >= MAX_PAGES) {
        throw discoveryLimitExceeded(
          "pages",
          MAX_PAGES,
          pageNumber + 1,
          `${host} lists its tools across more than ${MAX_PAGES} pages.`,
        );
      }
      pending = requestPage(client, cursor);
      // Let the request leave (its send runs on later ticks) before the CPU work in onPage.
      await new Promise((resolve) => setImmediate(resolve));
    }
    onPage(tools);
    if (cursor === undefined) return;
  }
}

function requestPage(client: Client, cursor: string | undefined): Promise<unknown> {
  const request = client.request(
    { method: "tools/list", params: cursor === undefined ? {} : { cursor } },
    anyResult,
  );
  // Marked handled: if onPage throws while this page is in flight, closing the session rejects
  // it with nobody left to listen. Whoever awaits it still sees the rejection.
  request.catch(() => {});
  return request;
}

function definition(entry: z.infer<typeof toolEntry>): ToolDefinition {
  const tool: ToolDefinition = { name: entry.name, inputSchema: entry.inputSchema };
  if (entry.title != null) tool.title = entry.title;
  if (entry.description != null) tool.description = entry.description;
  if (entry.outputSchema != null) tool.outputSchema = entry.outputSchema;
  if (entry.annotations != null) tool.annotations = entry.annotations;
  return tool;
}

// The path is built from indices and our own field names only (issue paths stop at the first
// unknown field), never from remote text.
function malformed(host: string, pageNumber: number, path: readonly PropertyKey[]): AppError {
  const where = path.map((part) => (typeof part === "number" ? `[${part}]` : `.${String(part)}`)).join("");
  return new AppError(
    "remote_unreachable",
    `${host} answered tools/list (page ${pageNumber}) with a malformed result at result${where}.`,
    { reason: "protocol" },
  );
}
