import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

/**
 * Spawns `node <script> <args>` (a benchmark re-running itself in another role) and resolves
 * once the child prints `<marker> <json>` on stdout, so each side runs on its own event loop.
 */
export async function startChild(
  script: string,
  args: string[],
  marker: string,
  env: Record<string, string> = {},
) {
  const child = spawn(process.execPath, [script, ...args], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const lines = createInterface({ input: child.stdout });
  const firstLine = await new Promise<string>((resolve, reject) => {
    lines.on("line", (line) => {
      if (line.startsWith(`${marker} `)) resolve(line.slice(marker.length + 1));
    });
    void exited.then((code) => reject(new Error(`${args.join(" ")} exited (${code}) before ${marker}`)));
  });
  return {
    firstLine,
    exited: exited.then((code) => {
      if (code !== 0) throw new Error(`${args.join(" ")} exited with ${code}`);
    }),
    kill: () => child.kill("SIGTERM"),
  };
}
