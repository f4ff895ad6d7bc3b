import type { Command } from "commander";
import { CliError, exitCodes, usageError } from "./cli-error.ts";
import { json, table } from "./format.ts";
import {
  DEFAULT_PROFILE,
  profileFlag,
  profileName,
  profilesPath,
  readProfiles,
  toStderr,
  writeProfiles,
} from "./profiles.ts";
import { normalizeBaseUrl } from "./settings.ts";
import { readSecretFromStdin } from "./terminal.ts";

/**
 * Stored connection targets. `patchbay login` keeps a login session in a profile;
 * `profile set --api-key-stdin` keeps an API key (for automation) out of every command line.
 * Neither is ever printed back.
 */
export function registerProfileCommands(program: Command): void {
  const profile = program
    .command("profile")
    .description("Stored base URLs and API keys (profiles.json, mode 0600)");

  profile
    .command("set")
    .description("Create or change a profile")
    .option("--profile <name>", `profile to change (default: "${DEFAULT_PROFILE}")`)
    .option("--base-url <url>", "patchbay's base URL for this profile")
    .option("--api-key-stdin", "read an API key from stdin and store it (one trailing newline is dropped)")
    .action(async (flags: { profile?: string; baseUrl?: string; apiKeyStdin?: boolean }) => {
      const name = profileName(flags.profile);
      if (flags.baseUrl === undefined && !flags.apiKeyStdin) {
        throw usageError("nothing to set: give --base-url and/or --api-key-stdin");
      }
      const baseUrl = flags.baseUrl === undefined ? undefined : normalizeBaseUrl(flags.baseUrl);
      const apiKey = flags.apiKeyStdin ? await readSecretFromStdin("API key") : undefined;
      if (apiKey !== undefined && !/^[\x21-\x7e]{1,512}$/.test(apiKey)) {
        throw usageError("the API key on stdin must be one word of visible ASCII");
      }
      const path = profilesPath();
      const { profiles } = readProfiles(path);
      if (apiKey !== undefined && profiles[name]?.oauth) {
        throw usageError(
          `profile ${name} is logged in; a profile holds one credential`,
          `log out first (patchbay logout${profileFlag(name)}), or use another --profile`,
        );
      }
      const next = { ...profiles[name], ...(baseUrl ? { baseUrl } : {}), ...(apiKey ? { apiKey } : {}) };
      writeProfiles(path, { profiles: { ...profiles, [name]: next } });
      process.stdout.write(
        `Profile ${name} saved in ${path}: base URL ${next.baseUrl ?? "(not set)"}, API key ${next.apiKey ? "stored" : "not stored"}.\n`,
      );
      if (apiKey) toStderr(`check it with: patchbay whoami${profileFlag(name)}`);
    });

  profile
    .command("list")
    .description("List profiles (keys are never shown, only whether one is stored)")
    .option("--json", "print JSON")
    .action((flags: { json?: boolean }) => {
      const path = profilesPath();
      const rows = Object.entries(readProfiles(path).profiles).map(([name, p]) => ({
        name,
        baseUrl: p.baseUrl ?? null,
        apiKeyStored: p.apiKey !== undefined,
        loggedIn: p.oauth !== undefined,
      }));
      process.stdout.write(
        flags.json
          ? json({ path, profiles: rows })
          : rows.length === 0
            ? `No profiles in ${path}.\n`
            : table(
                ["PROFILE", "BASE URL", "API KEY", "LOGIN"],
                rows.map((r) => [
                  r.name,
                  r.baseUrl ?? "-",
                  r.apiKeyStored ? "stored" : "-",
                  r.loggedIn ? "yes" : "-",
                ]),
              ),
      );
    });

  profile
    .command("remove")
    .description("Remove a profile and its stored key (log out first to revoke a login)")
    .argument("<name>", "the profile")
    .action((name: string) => {
      profileName(name);
      const path = profilesPath();
      const { [name]: removed, ...rest } = readProfiles(path).profiles;
      if (!removed) {
        throw new CliError("not_found", `there is no profile "${name}" in ${path}`, exitCodes.notFound);
      }
      if (removed.oauth) {
        throw usageError(
          `profile ${name} is logged in`,
          `log out first, which also revokes the login: patchbay logout --profile ${name}`,
        );
      }
      writeProfiles(path, { profiles: rest });
      process.stdout.write(`Removed profile ${name}.\n`);
    });
}
