import { randomBytes } from "node:crypto";
import net from "node:net";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { DatabaseHandle } from "../../../platform/db/client.ts";
import { telemetryDatabase } from "./sql-runner.ts";

const adminUrl = process.env.PATCHBAY_TEST_PG;

/**
 * A COPY the server fails at once: its refusal can come in the same read as its CopyInResponse,
 * so postgres.js emits the COPY stream's error before `copyIn` has the stream to listen on. That
 * ended the process (an unhandled 'error' event) until postgres.js was patched to listen itself
 * (patches/postgres+3.4.9.patch). A proxy between client and server makes it happen every time:
 * after a COPY statement it sends a CopyFail of its own, and it hands the server's answers on in
 * one piece.
 */
describe.runIf(adminUrl)("COPY through postgres.js", () => {
  const name = `patchbay_copy_${randomBytes(6).toString("hex")}`;
  let admin: postgres.Sql;
  let sql: postgres.Sql;
  let proxy: net.Server;
  /** Set to fail the next COPY the client sends. */
  let failNextCopy = false;

  beforeAll(async () => {
    admin = postgres(adminUrl ?? "", { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${name}`);
    const target = new URL(adminUrl ?? "");
    target.pathname = `/${name}`;
    const upstream = { port: Number(target.port || 5432), host: target.hostname };
    proxy = net.createServer((client) => {
      const server = net.connect(upstream.port, upstream.host);
      let held: Buffer[] | undefined;
      server.on("data", (data) => {
        if (!held) return void client.write(data);
        // The COPY's answers, held together: CopyInResponse, ErrorResponse, ReadyForQuery.
        held.push(data);
      });
      client.on("data", (data) => {
        server.write(data);
        if (failNextCopy && data[0] === 0x51 && data.includes("copy ")) {
          failNextCopy = false;
          const reason = Buffer.from("injected by the test\0");
          const length = Buffer.alloc(4);
          length.writeInt32BE(4 + reason.length);
          server.write(Buffer.concat([Buffer.from("f"), length, reason]));
          held = [];
          setTimeout(() => {
            client.write(Buffer.concat(held ?? []));
            held = undefined;
          }, 200);
        }
      });
      const close = () => {
        client.destroy();
        server.destroy();
      };
      client.on("close", close).on("error", close);
      server.on("close", close).on("error", close);
    });
    await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
    const port = (proxy.address() as net.AddressInfo).port;
    target.hostname = "127.0.0.1";
    target.port = String(port);
    sql = postgres(target.toString(), { max: 1, onnotice: () => {} });
    await sql`create table copied (n integer)`;
  });

  afterAll(async () => {
    await sql?.end({ timeout: 1 });
    await new Promise((resolve) => proxy?.close(resolve));
    await admin?.unsafe(`drop database if exists ${name} with (force)`);
    await admin?.end({ timeout: 1 });
  });

  test("a COPY refused in the same read as its start fails its transaction, not the process; the connection goes on", async () => {
    const db = telemetryDatabase({ postgres: sql } as unknown as DatabaseHandle);
    failNextCopy = true;
    await expect(db.transaction((run) => run.copyIn("copied (n)", Buffer.from("1\n2\n")))).rejects.toThrow();
    // The same connection (max 1) copies again, and nothing of the refused COPY was kept.
    await db.transaction((run) => run.copyIn("copied (n)", Buffer.from("3\n4\n")));
    expect(await sql`select n from copied order by n`).toEqual([{ n: 3 }, { n: 4 }]);
  });
});
