import type { Command } from "commander";
import { type Config, loadConfig } from "../../config.ts";
import { isAppError } from "../../errors.ts";
import { bootstrapOrganization } from "../../features/organizations/bootstrap-organization.ts";
import { setUserPassword } from "../../features/web-sessions/set-password.ts";
import { rewrapWebhookSecrets } from "../../features/webhooks/index.ts";
import { addVersionToKekFile, readKekSource } from "../../platform/vault/kek-source.ts";
import { addKekVersion, parseKeyring } from "../../platform/vault/keyring.ts";
import { loadKeyring } from "../../platform/vault/load-keyring.ts";
import { rewrapAllCredentials } from "../../platform/vault/rewrap-credentials.ts";
import { openMigratedDatabase } from "../../startup.ts";
import { CliError, exitCodes } from "./cli-error.ts";
import { readSecretFromStdin } from "./terminal.ts";

type Database = Awaited<ReturnType<typeof openMigratedDatabase>>;

async function withDatabase<T>(config: Config, fn: (database: Database) => Promise<T>): Promise<T> {
  const database = await openMigratedDatabase(config);
  try {
    return await fn(database);
  } finally {
    await database.close();
  }
}

/**
 * Operator commands that work on the configured database directly, without a running server:
 * the subcommands of `admin` (main.ts declares the group itself).
 */
export function registerAdminCommands(admin: Command): void {
  admin
    .command("bootstrap")
    .description("Create an organisation, an owner, an environment and an owner API key")
    .option("--json", "print the result as JSON")
    .option("--org-name <name>", "organisation name")
    .option("--email <email>", "owner email (an existing user becomes owner of the new organisation)")
    .action(async (opts: { json?: boolean; orgName?: string; email?: string }) => {
      const { organizationId, environmentId, userId, apiKey } = await withDatabase(loadConfig(), ({ db }) =>
        bootstrapOrganization({ db, input: { organizationName: opts.orgName, email: opts.email } }),
      );
      process.stdout.write(
        opts.json
          ? `${JSON.stringify({ organizationId, environmentId, userId, apiKey })}\n`
          : `Organisation ${organizationId}\nEnvironment  ${environmentId}\nOwner        ${userId}\nAPI key      ${apiKey}  (shown once)\n`,
      );
    });

  admin
    .command("set-password")
    .description("Set a user's web sign-in password, read from stdin; ends their open sessions")
    .requiredOption("--email <email>", "the user's email")
    .action(async (opts: { email: string }) => {
      // Read before opening the database: a prompt must not hold the embedded database's lock.
      const password = await readSecretFromStdin("password");
      const result = await withDatabase(loadConfig(), ({ db }) =>
        setUserPassword({ db, now: new Date(), input: { email: opts.email, password } }),
      ).catch((error: unknown) => {
        if (!isAppError(error)) throw error;
        const exitCode = error.code === "not_found" ? exitCodes.notFound : exitCodes.usage;
        throw new CliError(error.code, error.message, exitCode);
      });
      process.stdout.write(
        `Password set for ${opts.email.trim().toLowerCase()} (${result.userId}); ${result.sessionsRevoked} open session(s) ended.\n`,
      );
    });

  // Production rotation is two steps: `--print-new-keyring`, deploy its output as PATCHBAY_KEK to
  // every instance, then run without the flag to re-wrap every credential under the new version.
  // With the development key file it does both at once. Key material is printed only by
  // `--print-new-keyring`.
  admin
    .command("rotate-kek")
    .description("Re-wrap every credential's data key under the newest KEK version")
    .option("--print-new-keyring", "print the keyring with a new highest version prepended; change nothing")
    .option("--json", "print the result as JSON")
    .action(async (opts: { printNewKeyring?: boolean; json?: boolean }) => {
      const config = loadConfig();
      process.stdout.write(
        opts.printNewKeyring ? printNewKeyring(config, opts.json) : await rotate(config, opts.json),
      );
    });
}

function printNewKeyring(config: Config, json: boolean | undefined): string {
  const raw = addKekVersion(readKekSource(config).raw);
  const { activeVersion } = parseKeyring(raw);
  if (json) return `${JSON.stringify({ activeVersion, keyring: raw })}\n`;
  process.stderr.write(
    `New active version v${activeVersion}. Set it as PATCHBAY_KEK on every instance, then run ` +
      "`patchbay admin rotate-kek` to re-wrap the credentials.\n",
  );
  return `${raw}\n`;
}

async function rotate(config: Config, json: boolean | undefined): Promise<string> {
  // The server would generate the development file on first start; so does this.
  if (!config.kek) loadKeyring(config);
  const source = readKekSource(config);
  const result = await withDatabase(config, async (database) => {
    const run = async () => {
      // Read inside the lock: two rotations adding "v2" at once would each keep a different key.
      const keyring = parseKeyring(source.kind === "file" ? addVersionToKekFile(source.path) : source.raw);
      const credentials = await rewrapAllCredentials(database.db, keyring);
      // Webhook signing secrets are sealed the same way (features/webhooks/signing-secret.ts).
      const webhooks = await rewrapWebhookSecrets(database.db, keyring);
      if (webhooks.failed.length > 0) {
        process.stderr.write(
          `${webhooks.failed.length} webhook secret(s) could not be decrypted and keep their KEK version (${webhooks.failed.slice(0, 10).join(", ")}); rotate their secrets.\n`,
        );
      }
      return {
        activeVersion: keyring.activeVersion,
        ...credentials,
        webhookSecrets: { rewrapped: webhooks.rewrapped, alreadyCurrent: webhooks.alreadyCurrent },
      };
    };
    // The file is rewritten under the start-up lock (PostgreSQL) or the data-dir lock (PGlite).
    return source.kind === "file" ? await database.withStartupLock(run) : await run();
  });
  if (json) return `${JSON.stringify(result)}\n`;
  const counts = `Re-wrapped ${result.rewrapped} credential(s) under KEK v${result.activeVersion}; ${result.alreadyCurrent} already current.`;
  return source.kind === "file"
    ? `Added KEK v${result.activeVersion} to ${source.path}. ${counts} Restart running instances so they load it.\n`
    : `${counts} Older versions may now be removed from PATCHBAY_KEK.\n`;
}
