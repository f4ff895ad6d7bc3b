// `patchbay …` as a child process with an API key, against an app served on a loopback port: the
// CLI as a user runs it, without a profile (HOME points nowhere) or any other environment.
import { execFile } from "node:child_process";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { serve } from "@hono/node-server";

const bin = fileURLToPath(new URL("../../bin/patchbay.js", import.meta.url));

export type CliRun = { code: number; stdout: string; stderr: string };

/** Runs `patchbay <args>` with PATCHBAY_BASE_URL and PATCHBAY_API_KEY; never rejects. */
export function runCli(baseUrl: string, apiKey: string, args: string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [bin, ...args],
      {
        env: {
          PATH: process.env.PATH,
          HOME: "/nonexistent",
          PATCHBAY_BASE_URL: baseUrl,
          PATCHBAY_API_KEY: apiKey,
        },
      },
      (error, stdout, stderr) =>
        resolve({ code: typeof error?.code === "number" ? error.code : 0, stdout, stderr }),
    );
  });
}

/** Serves `app` on a free loopback port for the CLI to reach; `close` stops it. */
export async function listenOnLoopback(app: {
  fetch: (req: Request) => Response | Promise<Response>;
}): Promise<{ baseUrl: string; close: () => void }> {
  const server = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" });
  await new Promise((r) => server.once("listening", r));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => server.close(),
  };
}
