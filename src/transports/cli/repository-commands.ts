import type { Command } from "commander";
import type { Repository } from "../../features/repositories/schemas.ts";
import { CliError, exitCodes, usageError } from "./cli-error.ts";
import { confirm } from "./confirm.ts";
import { keyValue, table } from "./format.ts";
import { addMcpOptions, type McpFlags, type MutationFlags, openMcpSession } from "./mcp-session.ts";

type CreateFlags = MutationFlags & {
  provider?: string;
  path?: string;
  installationId?: string;
  fullName?: string;
  defaultBranch?: string;
  testCommand?: string;
  service?: string[];
};
type ListFlags = McpFlags & { pageSize?: string; cursor?: string; all?: boolean };
type Page = { items: Repository[]; nextCursor: string | null };

const open = (flags: McpFlags, id?: string) =>
  openMcpSession(flags, id, { collection: "repositories", group: "repository" });

const location = (r: Repository) => r.path ?? r.fullName ?? "";

/** `patchbay environment repository list|get|create|delete` (docs/cli.md). */
export function registerRepositoryCommands(environment: Command): void {
  const repository = environment
    .command("repository")
    .description(
      "Repositories registered for remediation in one environment (--environment <uuid> on every command)",
    );

  addMcpOptions(
    repository
      .command("list")
      .description("List the environment's registered repositories")
      .option("--page-size <n>", "repositories per page, 1–200 (server default 50)")
      .option("--cursor <cursor>", "continue from a previous page's nextCursor")
      .option("--all", "follow nextCursor until the last page"),
  ).action(async (flags: ListFlags) => {
    const session = open(flags);
    if (flags.pageSize !== undefined && !/^([1-9]\d?|1\d\d|200)$/.test(flags.pageSize)) {
      throw usageError(`--page-size must be 1–200 (got "${flags.pageSize}")`);
    }
    if (flags.all && flags.cursor !== undefined)
      throw usageError("--all starts at the first page; drop --cursor");
    const fetchPage = async (cursor: string | undefined) =>
      (await session.request({
        method: "GET",
        path: session.path(),
        query: { pageSize: flags.pageSize, cursor },
      })) as Page;
    let page = await fetchPage(flags.cursor);
    if (flags.all) {
      const items = [...page.items];
      for (let n = 1; page.nextCursor !== null && n < 1000; n++) {
        page = await fetchPage(page.nextCursor);
        items.push(...page.items);
      }
      page = { items, nextCursor: page.nextCursor };
    }
    if (session.json) return session.printJson(page);
    session.print(
      table(
        ["ID", "PROVIDER", "LOCATION", "BRANCH", "SERVICES", "TEST COMMAND"],
        page.items.map((r) => [
          r.id,
          r.provider,
          location(r),
          r.defaultBranch,
          r.services.join(","),
          r.testCommand,
        ]),
      ),
    );
    if (page.nextCursor !== null) session.info(`more repositories: --cursor ${page.nextCursor} (or --all)`);
  });

  addMcpOptions(
    repository
      .command("get")
      .description("Show one registered repository")
      .argument("<repository-id>", "e.g. rep_…"),
  ).action(async (id: string, flags: McpFlags) => {
    const session = open(flags, id);
    const repo = (await session.request({ method: "GET", path: session.path() })) as Repository;
    if (session.json) return session.printJson(repo);
    session.print(block(repo));
  });

  addMcpOptions(
    repository
      .command("create")
      .description(
        "Register a repository: local-git by path on the server's machine, or github through the App",
      )
      .option("--provider <provider>", "local-git | github (required)")
      .option("--path <path>", "local-git: absolute path of the work tree's top level")
      .option("--installation-id <id>", "github: the App installation's id")
      .option("--full-name <owner/name>", "github: the repository")
      .option(
        "--default-branch <branch>",
        "the branch fixes are based on (local-git default: main; github: the repository's)",
      )
      .option("--test-command <command>", "run with sh -c at the repository root in the sandbox (required)")
      .option(
        "--service <name>",
        "a service whose problems this repository fixes (repeatable, at least one)",
        collect,
        [],
      )
      .option("--idempotency-key <key>", "Idempotency-Key to send (default: a new UUID, reported)"),
  ).action(async (flags: CreateFlags) => {
    const session = open(flags);
    if (!flags.testCommand) throw usageError("--test-command is required");
    if (!flags.service?.length) throw usageError("--service is required (repeat it for several services)");
    let body: Record<string, unknown>;
    if (flags.provider === "local-git") {
      if (!flags.path) throw usageError("--path is required with --provider local-git");
      if (flags.installationId || flags.fullName)
        throw usageError("--installation-id and --full-name go with --provider github");
      body = { provider: "local-git", path: flags.path, defaultBranch: flags.defaultBranch ?? "main" };
    } else if (flags.provider === "github") {
      if (!flags.installationId || !/^\d{1,15}$/.test(flags.installationId)) {
        throw usageError("--installation-id <number> is required with --provider github");
      }
      if (!flags.fullName) throw usageError("--full-name owner/name is required with --provider github");
      if (flags.path) throw usageError("--path goes with --provider local-git");
      body = {
        provider: "github",
        installationId: Number(flags.installationId),
        fullName: flags.fullName,
        ...(flags.defaultBranch ? { defaultBranch: flags.defaultBranch } : {}),
      };
    } else {
      throw usageError(`--provider must be local-git or github (got "${flags.provider ?? ""}")`);
    }
    const repo = (await session.request({
      method: "POST",
      path: session.path(),
      headers: { "idempotency-key": session.idempotencyKey(flags) },
      body: { ...body, testCommand: flags.testCommand, services: flags.service },
    })) as Repository;
    if (session.json) return session.printJson(repo);
    session.print(`Registered ${repo.id}.\n${block(repo)}`);
  });

  addMcpOptions(
    repository
      .command("delete")
      .description("Remove a registration (patchbay's branches stay in the repository)")
      .argument("<repository-id>", "e.g. rep_…")
      .option("--yes", "delete without asking (required when stdin is not a terminal)")
      .option("--idempotency-key <key>", "Idempotency-Key to send (default: a new UUID, reported)"),
  ).action(async (id: string, flags: MutationFlags & { yes?: boolean }) => {
    const session = open(flags, id);
    if (!flags.yes && !process.stdin.isTTY) {
      throw usageError("refusing to delete without confirmation: stdin is not a terminal; pass --yes");
    }
    if (!flags.yes && !(await confirm(`Remove the registration ${id}?`))) {
      throw new CliError("not_confirmed", `${id} was not removed`, exitCodes.other);
    }
    await session.request({
      method: "DELETE",
      path: session.path(),
      headers: { "idempotency-key": session.idempotencyKey(flags) },
    });
    if (session.json) return session.printJson({ id, deleted: true });
    session.print(`Removed ${id}.\n`);
  });
}

function block(r: Repository): string {
  return keyValue([
    ["ID", r.id],
    ["Provider", r.provider],
    [r.provider === "local-git" ? "Path" : "Repository", location(r)],
    ...(r.installationId !== undefined
      ? ([["Installation", String(r.installationId)]] as [string, string][])
      : []),
    ["Default branch", r.defaultBranch],
    ["Test command", r.testCommand],
    ["Services", r.services.join(", ")],
    ["Environment", r.environmentId],
    ["Created", r.createdAt],
  ]);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}
