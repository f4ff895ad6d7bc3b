import type { Command } from "commander";
import type { Repository } from "../../features/repositories/schemas.ts";
import { usageError } from "./cli-error.ts";
import { keyValue, table } from "./format.ts";
import {
  addEnvironmentGroup,
  collect,
  idempotencyKeyHelp,
  type Resource,
  type SessionFlags,
} from "./session.ts";
import { confirmOrStop, requireTerminalOrYes } from "./terminal.ts";

type CreateFlags = SessionFlags & {
  provider?: string;
  path?: string;
  installationId?: string;
  fullName?: string;
  defaultBranch?: string;
  testCommand?: string;
  service?: string[];
};

const repositories: Resource = {
  group: "repository",
  collection: "repositories",
  item: ["<repository-id>", "e.g. rep_…"],
};

const location = (r: Repository) => r.path ?? r.fullName ?? "";

/** `patchbay environment repository list|get|create|delete` (docs/cli.md). */
export function registerRepositoryCommands(environment: Command): void {
  const { add } = addEnvironmentGroup(
    environment,
    repositories,
    "Repositories registered for remediation in one environment",
    {
      noun: "repositories",
      description: "List the environment's registered repositories",
      render: (items: Repository[]) =>
        table(
          ["ID", "PROVIDER", "LOCATION", "BRANCH", "SERVICES", "TEST COMMAND"],
          items.map((r) => [
            r.id,
            r.provider,
            location(r),
            r.defaultBranch,
            r.services.join(","),
            r.testCommand,
          ]),
        ),
    },
  );

  add({
    name: "get",
    description: "Show one registered repository",
    item: true,
    run: async (session) => {
      const repo = (await session.request({ method: "GET", path: session.path() })) as Repository;
      session.show(repo, block(repo));
    },
  });

  add<CreateFlags>({
    name: "create",
    description:
      "Register a repository: local-git by path on the server's machine, or github through the App",
    options: [
      ["--provider <provider>", "local-git | github (required)"],
      ["--path <path>", "local-git: absolute path of the work tree's top level"],
      ["--installation-id <id>", "github: the App installation's id"],
      ["--full-name <owner/name>", "github: the repository"],
      [
        "--default-branch <branch>",
        "the branch fixes are based on (local-git default: main; github: the repository's)",
      ],
      ["--test-command <command>", "run with sh -c at the repository root in the sandbox (required)"],
      [
        "--service <name>",
        "a service whose problems this repository fixes (repeatable, at least one)",
        collect,
        [],
      ],
      ["--idempotency-key <key>", idempotencyKeyHelp],
    ],
    run: async (session, flags) => {
      if (!flags.testCommand) throw usageError("--test-command is required");
      if (!flags.service?.length) throw usageError("--service is required (repeat it for several services)");
      const body = { ...providerBody(flags), testCommand: flags.testCommand, services: flags.service };
      const headers = { "idempotency-key": session.idempotencyKey() };
      const repo = (await session.request({
        method: "POST",
        path: session.path(),
        headers,
        body,
      })) as Repository;
      session.show(repo, `Registered ${repo.id}.\n${block(repo)}`);
    },
  });

  add<SessionFlags & { yes?: boolean }>({
    name: "delete",
    description: "Remove a registration (patchbay's branches stay in the repository)",
    item: true,
    options: [
      ["--yes", "delete without asking (required when stdin is not a terminal)"],
      ["--idempotency-key <key>", idempotencyKeyHelp],
    ],
    run: async (session, flags) => {
      const id = session.id;
      requireTerminalOrYes(flags.yes);
      await confirmOrStop(flags.yes, `Remove the registration ${id}?`, `${id} was not removed`);
      const headers = { "idempotency-key": session.idempotencyKey() };
      await session.request({ method: "DELETE", path: session.path(), headers });
      session.show({ id, deleted: true }, `Removed ${id}.\n`);
    },
  });
}

function providerBody(flags: CreateFlags): Record<string, unknown> {
  if (flags.provider === "local-git") {
    if (!flags.path) throw usageError("--path is required with --provider local-git");
    if (flags.installationId || flags.fullName)
      throw usageError("--installation-id and --full-name go with --provider github");
    return { provider: "local-git", path: flags.path, defaultBranch: flags.defaultBranch ?? "main" };
  }
  if (flags.provider !== "github") {
    throw usageError(`--provider must be local-git or github (got "${flags.provider ?? ""}")`);
  }
  if (!flags.installationId || !/^\d{1,15}$/.test(flags.installationId)) {
    throw usageError("--installation-id <number> is required with --provider github");
  }
  if (!flags.fullName) throw usageError("--full-name owner/name is required with --provider github");
  if (flags.path) throw usageError("--path goes with --provider local-git");
  return {
    provider: "github",
    installationId: Number(flags.installationId),
    fullName: flags.fullName,
    ...(flags.defaultBranch ? { defaultBranch: flags.defaultBranch } : {}),
  };
}

function block(r: Repository): string {
  return keyValue([
    ["ID", r.id],
    ["Provider", r.provider],
    [r.provider === "local-git" ? "Path" : "Repository", location(r)],
    ...(r.installationId !== undefined
      ? [["Installation", String(r.installationId)] as [string, string]]
      : []),
    ["Default branch", r.defaultBranch],
    ["Test command", r.testCommand],
    ["Services", r.services.join(", ")],
    ["Environment", r.environmentId],
    ["Created", r.createdAt],
  ]);
}
