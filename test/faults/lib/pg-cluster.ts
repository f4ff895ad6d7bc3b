import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { chmod, chown, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import postgres from "postgres";
import { freePort } from "../../lib/spawn-server.ts";

const run = promisify(execFile);

/**
 * A PostgreSQL cluster of the fault suite's own: Debian's server binaries, `initdb` in a temporary
 * directory, its own port and socket directory. The suite stops, kills and restarts it; the
 * machine's shared server is never touched.
 */
export type PgCluster = {
  port: number;
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  start(): Promise<void>;
  /** `pg_ctl stop -m fast`: the administrator's stop, open connections terminated. */
  stop(): Promise<void>;
  /** SIGKILL to the postmaster: a crash. Its backends notice and exit on their own. */
  killPostmaster(): Promise<void>;
  /** Creates a database on the cluster; its URL. */
  createDatabase(name: string): Promise<string>;
  /** Removes the cluster (stopping it first). */
  destroy(): Promise<void>;
};

/** The newest installed server's binaries, e.g. /usr/lib/postgresql/15/bin. */
function serverBin(): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const version = versions[0];
  if (!version) throw new Error("PostgreSQL server binaries not found under /usr/lib/postgresql");
  return join(root, version, "bin");
}

export async function startPgCluster(): Promise<PgCluster> {
  const bin = serverBin();
  const dir = await mkdtemp(join(tmpdir(), "patchbay-faults-pg-"));
  const data = join(dir, "data");
  // initdb and postgres refuse to run as root: as root, run them as the postgres user.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  await chmod(dir, 0o700);
  const pg = (tool: string, args: string[]) =>
    asRoot
      ? run("runuser", ["-u", "postgres", "--", join(bin, tool), ...args], { cwd: dir })
      : run(join(bin, tool), args, { cwd: dir });
  await pg("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
  const port = await freePort();
  const options = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    `-c unix_socket_directories=${dir}`,
    "-c max_connections=200",
    "-c shared_buffers=64MB",
  ].join(" ");

  const start = async () => {
    // After a crash, the dead postmaster's backends may still hold its shared memory for a
    // moment: retry until the new postmaster gets it.
    for (let attempt = 1; ; attempt++) {
      try {
        await pg("pg_ctl", ["-D", data, "-o", options, "-l", join(dir, "log"), "-w", "-t", "30", "start"]);
        return;
      } catch (error) {
        if (attempt >= 20) throw error;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  };
  const stop = async () => {
    await pg("pg_ctl", ["-D", data, "-m", "fast", "-w", "-t", "30", "stop"]).catch(() => {});
  };

  await start();
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    start,
    stop,
    async killPostmaster() {
      const pid = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0]);
      process.kill(pid, "SIGKILL");
      // Gone once signal 0 fails.
      for (;;) {
        try {
          process.kill(pid, 0);
        } catch {
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async createDatabase(name) {
      const admin = postgres(`postgres://postgres@127.0.0.1:${port}/postgres`, {
        max: 1,
        onnotice: () => {},
      });
      try {
        await admin.unsafe(`create database "${name}"`);
      } finally {
        await admin.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    async destroy() {
      await stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
