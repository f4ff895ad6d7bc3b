import { and, eq } from "drizzle-orm";
import type { Db } from "../../platform/db/client.ts";
import { organizations } from "../../platform/db/schema/organizations.ts";

/** The principal of paid calls: the verified payer on its network (DESIGN §4). */
export type Wallet = { address: string; network: string };

export type WalletOrganization = { id: string; name: string; wallet: Wallet; createdAt: Date };

/** Addresses are stored lowercase so a checksummed and a plain spelling are one wallet. */
export const walletOf = (payer: { payer: string; network: string }): Wallet => ({
  address: payer.payer.toLowerCase(),
  network: payer.network,
});

export async function findWalletOrganization(
  db: Db,
  wallet: Wallet,
): Promise<WalletOrganization | undefined> {
  const [row] = await db
    .select({ id: organizations.id, name: organizations.name, createdAt: organizations.createdAt })
    .from(organizations)
    .where(
      and(
        eq(organizations.kind, "wallet"),
        eq(organizations.walletNetwork, wallet.network),
        eq(organizations.walletAddress, wallet.address),
      ),
    );
  return row ? { ...row, wallet } : undefined;
}
