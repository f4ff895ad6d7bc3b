import type { Command } from "commander";
import { loadConfig } from "../../config.ts";
import { isAppError } from "../../errors.ts";
import { bootstrapOrganization } from "../../features/organizations/bootstrap-organization.ts";
import { setUserPassword } from "../../features/web-sessions/set-password.ts";
import { openMigratedDatabase } from "../../startup.ts";
import { CliError, exitCodes } from "./cli-error.ts";
import { registerRotateKekCommand } from "./rotate-kek.ts";
import { readSecretFromStdin } from "./stdin-secret.ts";

/** Operator commands that work on the configured database directly, without a running server. */
export function registerAdminCommands(program: Command): void {
  const admin = program.command("admin").description("Operator commands against the configured database");

  admin
    .command("bootstrap")
    .description("Create an organisation, an owner, an environment and an owner API key")
    .option("--json", "print the result as JSON")
    .option("--org-name <name>", "organisation name")
    .option("--email <email>", "owner email (an existing user becomes owner of the new organisation)")
    .action(async (opts: { json?: boolean; orgName?: string; email?: string }) => {
      const config = loadConfig();
      const database = await openMigratedDatabase(config);
      try {
        const result = await bootstrapOrganization({
          db: database.db,
          input: { organizationName: opts.orgName, email: opts.email },
        });
        const out = {
          organizationId: result.organizationId,
          environmentId: result.environmentId,
          userId: result.userId,
          apiKey: result.apiKey,
        };
        process.stdout.write(
          opts.json
            ? `${JSON.stringify(out)}\n`
            : `Organisation ${out.organizationId}\nEnvironment  ${out.environmentId}\nOwner        ${out.userId}\nAPI key      ${out.apiKey}  (shown once)\n`,
        );
      } finally {
        await database.close();
      }
    });

  admin
    .command("set-password")
    .description("Set a user's web sign-in password, read from stdin; ends their open sessions")
    .requiredOption("--email <email>", "the user's email")
    .action(async (opts: { email: string }) => {
      // Read before opening the database: a prompt must not hold the embedded database's lock.
      const password = await readSecretFromStdin("password");
      const config = loadConfig();
      const database = await openMigratedDatabase(config);
      try {
        const result = await setUserPassword({
          db: database.db,
          now: new Date(),
          input: { email: opts.email, password },
        });
        process.stdout.write(
          `Password set for ${opts.email.trim().toLowerCase()} (${result.userId}); ${result.sessionsRevoked} open session(s) ended.\n`,
        );
      } catch (error) {
        if (!isAppError(error)) throw error;
        const exitCode = error.code === "not_found" ? exitCodes.notFound : exitCodes.usage;
        throw new CliError(error.code, error.message, exitCode);
      } finally {
        await database.close();
      }
    });

  registerRotateKekCommand(admin);
}
