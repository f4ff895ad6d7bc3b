import type { Command } from "commander";
import { type Config, loadConfig } from "../../config.ts";
import { addVersionToKekFile, type KekSource, readKekSource } from "../../platform/vault/kek-source.ts";
import { addKekVersion, parseKeyring } from "../../platform/vault/keyring.ts";
import { loadKeyring } from "../../platform/vault/load-keyring.ts";
import { rewrapAllCredentials } from "../../platform/vault/rewrap-credentials.ts";
import { openMigratedDatabase } from "../../startup.ts";

type Options = { printNewKeyring?: boolean; json?: boolean };

/**
 * `patchbay admin rotate-kek`. Production rotation is two steps: `--print-new-keyring`, deploy
 * its output as PATCHBAY_KEK to every instance, then run without the flag to re-wrap every
 * credential under the new version. With the development key file it does both at once.
 * Key material is printed only by `--print-new-keyring`.
 */
export function registerRotateKekCommand(admin: Command): void {
  admin
    .command("rotate-kek")
    .description("Re-wrap every credential's data key under the newest KEK version")
    .option("--print-new-keyring", "print the keyring with a new highest version prepended; change nothing")
    .option("--json", "print the result as JSON")
    .action(async (opts: Options) => {
      const config = loadConfig();
      process.stdout.write(opts.printNewKeyring ? printNewKeyring(config, opts) : await rotate(config, opts));
    });
}

function printNewKeyring(config: Config, opts: Options): string {
  const raw = addKekVersion(readKekSource(config).raw);
  const { activeVersion } = parseKeyring(raw);
  if (opts.json) return `${JSON.stringify({ activeVersion, keyring: raw })}\n`;
  process.stderr.write(
    `New active version v${activeVersion}. Set it as PATCHBAY_KEK on every instance, then run ` +
      "`patchbay admin rotate-kek` to re-wrap the credentials.\n",
  );
  return `${raw}\n`;
}

async function rotate(config: Config, opts: Options): Promise<string> {
  // The server would generate the development file on first start; so does this.
  if (!config.kek) loadKeyring(config);
  const database = await openMigratedDatabase(config);
  try {
    const source = readKekSource(config);
    const run = async () => {
      // Read inside the lock: two rotations adding "v2" at once would each keep a different key.
      const keyring = parseKeyring(source.kind === "file" ? addVersionToKekFile(source.path) : source.raw);
      const counts = await rewrapAllCredentials(database.db, keyring);
      return { activeVersion: keyring.activeVersion, ...counts };
    };
    // The file is rewritten under the start-up lock (PostgreSQL) or the data-dir lock (PGlite).
    const result = source.kind === "file" ? await database.withStartupLock(run) : await run();
    return opts.json ? `${JSON.stringify(result)}\n` : summary(source, result);
  } finally {
    await database.close();
  }
}

function summary(
  source: KekSource,
  r: { activeVersion: number; rewrapped: number; alreadyCurrent: number },
): string {
  const counts = `Re-wrapped ${r.rewrapped} credential(s) under KEK v${r.activeVersion}; ${r.alreadyCurrent} already current.`;
  return source.kind === "file"
    ? `Added KEK v${r.activeVersion} to ${source.path}. ${counts} Restart running instances so they load it.\n`
    : `${counts} Older versions may now be removed from PATCHBAY_KEK.\n`;
}
