import { Command, CommanderError } from "commander";
import { ConfigError, EX_CONFIG } from "../../config-error.ts";
import { version } from "../../version.ts";
import { CliError, exitCodes } from "./cli-error.ts";
import { registerClientCommands } from "./client-commands.ts";
import { formatCliError } from "./report-error.ts";
import { styleFor } from "./style.ts";

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
  registerClientCommands(program);

  try {
    await program.parseAsync(argv);
  } catch (error) {
    // Help and --version exit 0; every other parse failure is a usage error (docs/cli.md).
    if (error instanceof CommanderError) process.exit(error.exitCode === 0 ? 0 : exitCodes.usage);
    if (error instanceof CliError) {
      process.stderr.write(formatCliError(error, styleFor(process.stderr)));
      process.exit(error.exitCode);
    }
    if (error instanceof ConfigError) {
      process.stderr.write(`patchbay: invalid configuration: ${error.message}\n`);
      process.exit(EX_CONFIG);
    }
    process.stderr.write(`patchbay: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  }
}

/** `admin …`, `help …` and a bare `patchbay` / `--help` (whose listing shows `admin`). */
function mayNeedAdmin(argv: string[]): boolean {
  const first = argv.slice(2).find((arg) => !arg.startsWith("-"));
  return first === undefined || first === "admin" || first === "help";
}
