import { Command } from "commander";
import type { Environment } from "../../features/environments/schemas.ts";
import { version } from "../../version.ts";
import { registerAuditCommands } from "./audit-commands.ts";
import { exitFor } from "./cli-error.ts";
import { table } from "./format.ts";
import { addHelpExamples } from "./help-examples.ts";
import { registerLoginCommands, registerProfileCommands, registerWhoamiCommand } from "./login-commands.ts";
import { registerMcpCommands } from "./mcp-commands.ts";
import {
  addClientOptions,
  type Profile,
  profilesPath,
  readProfiles,
  withProfilesLock,
  writeProfiles,
} from "./profiles.ts";
import { registerRepositoryCommands } from "./repository-commands.ts";
import { jsonHelp, openSession, readPages, resolveEnvironment, type SessionFlags } from "./session.ts";
import { registerTaskCommands } from "./task-commands.ts";
import { registerWebhookCommands } from "./webhook-commands.ts";

export async function main(argv: string[]): Promise<void> {
  const program = await buildProgram(argv);
  await program.parseAsync(argv).catch(exitFor);
}

/** Every command, declared; `argv` only decides whether the admin group's commands are loaded. */
export async function buildProgram(argv: string[]): Promise<Command> {
  const program = new Command()
    .name("patchbay")
    .description("patchbay: observability and autonomous remediation")
    .version(version, "-V, --version")
    .exitOverride();

  program
    .command("serve")
    .description("Run the service (embedded PGlite unless DATABASE_URL is a postgres:// URL)")
    .action(async () => {
      const [{ runServer }, { loadConfig }] = await Promise.all([
        import("../../main.ts"),
        import("../../config.ts"),
      ]);
      await runServer(loadConfig());
    });

  // The admin commands load the database layer (seconds of start-up): the group is declared here,
  // so `--help` lists it, and its subcommands are loaded only when `admin` (or `help`) is asked for.
  const admin = program.command("admin").description("Operator commands against the configured database");
  if (mayNeedAdmin(argv)) (await import("./admin.ts")).registerAdminCommands(admin);

  // The REST client commands (docs/cli.md). They load nothing of the server, so they start fast.
  const environment = program
    .command("environment")
    .description("Environments, their MCP connections, repositories and tasks");
  registerLoginCommands(program);
  registerWhoamiCommand(program);
  const list = environment
    .command("list")
    .description("List the organisation's environments (their ids are what --environment takes)")
    .option("--json", jsonHelp);
  addClientOptions(list).action(async (flags: SessionFlags) => {
    const session = openSession(flags);
    // Organisations have few environments; read them all.
    const page = await readPages<Environment>(session, "/environments", { pageSize: "200" }, true);
    const rows = page.items.map((e) => [e.id, e.name, String(e.revision)]);
    session.show(page, rows.length === 0 ? "No environments.\n" : table(["ID", "NAME", "REVISION"], rows));
  });
  const use = environment
    .command("use")
    .description("Remember an environment in the profile: environment commands then act on it by default")
    .argument("<name-or-id>", "the environment's name or UUID");
  addClientOptions(use).action(async (given: string, flags: SessionFlags) => {
    const session = openSession(flags);
    const chosen = await resolveEnvironment(session, given, "environment");
    // A UUID given as is: read its name, which also proves it is one of the organisation's.
    const env: Environment | { id: string; name: string } =
      chosen.name === undefined
        ? ((await session.request({ method: "GET", path: `/environments/${chosen.id}` })) as Environment)
        : { id: chosen.id, name: chosen.name };
    const { profile } = session.settings();
    const path = profilesPath();
    await withProfilesLock(path, async () => {
      const { profiles } = readProfiles(path);
      const current: Profile = profiles[profile] ?? {};
      writeProfiles(path, {
        profiles: { ...profiles, [profile]: { ...current, environment: { id: env.id, name: env.name } } },
      });
    });
    session.print(`Profile ${profile} now acts on environment ${env.name} (${env.id}).\n`);
  });
  registerProfileCommands(program);
  registerMcpCommands(environment);
  registerRepositoryCommands(environment);
  registerTaskCommands(environment);
  registerWebhookCommands(program);
  registerAuditCommands(program);
  addHelpExamples(program);
  return program;
}

/** `admin …` and `help …` (which may be `help admin`). */
function mayNeedAdmin(argv: string[]): boolean {
  const first = argv.slice(2).find((arg) => !arg.startsWith("-"));
  return first === "admin" || first === "help";
}
