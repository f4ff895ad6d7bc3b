import { Command } from "commander";
import { version } from "../../version.ts";
import { registerIdentityCommands } from "./identity-commands.ts";
import { registerLoginCommands } from "./login-commands.ts";
import { registerMcpCommands } from "./mcp-commands.ts";
import { registerProfileCommands } from "./profile-commands.ts";
import { exitFor } from "./report-error.ts";
import { registerRepositoryCommands } from "./repository-commands.ts";

export async function main(argv: string[]): Promise<void> {
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

  // The admin commands load the database layer (over a second of start-up); the client commands
  // must not pay for it on every call, so it is loaded only when it can be needed.
  if (mayNeedAdmin(argv)) (await import("./admin.ts")).registerAdminCommands(program);

  // The REST client commands (docs/cli.md). They load nothing of the server, so they start fast.
  const environment = program
    .command("environment")
    .description("Environments, their MCP connections and repositories");
  registerLoginCommands(program);
  registerIdentityCommands(program, environment);
  registerProfileCommands(program);
  registerMcpCommands(environment);
  registerRepositoryCommands(environment);

  await program.parseAsync(argv).catch(exitFor);
}

/** `admin …`, `help …` and a bare `patchbay` / `--help` (whose listing shows `admin`). */
function mayNeedAdmin(argv: string[]): boolean {
  const first = argv.slice(2).find((arg) => !arg.startsWith("-"));
  return first === undefined || first === "admin" || first === "help";
}
