import postgres from "postgres";

export type ScratchDatabase = {
  name: string;
  /** `adminUrl` with the scratch database's name in place of the admin database. */
  url: string;
  /** Drops it (`with (force)`: sessions still open are ended) and closes the admin connection. */
  drop(): Promise<void>;
};

/** A fresh database with a random name on the server `adminUrl` points at. */
export async function createScratchDatabase(adminUrl: string, prefix: string): Promise<ScratchDatabase> {
  const name = `${prefix}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${name}"`);
  } catch (error) {
    await admin.end({ timeout: 5 });
    throw error;
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  let dropping: Promise<void> | undefined;
  return {
    name,
    url: url.toString(),
    drop() {
      dropping ??= (async () => {
        try {
          await admin.unsafe(`drop database if exists "${name}" with (force)`);
        } finally {
          await admin.end({ timeout: 5 });
        }
      })();
      return dropping;
    },
  };
}
