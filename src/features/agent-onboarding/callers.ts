import { and, asc, eq } from "drizzle-orm";
import {
  type Payer,
  type SessionActor,
  sessionPermissions,
  type Wallet,
  type WalletActor,
  walletPermissions,
} from "../../actor.ts";
import { staleSessionToken } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import type { Db } from "../../platform/db/client.ts";
import { environments } from "../../platform/db/schema/environments.ts";
import { onboardingSessions } from "../../platform/db/schema/onboarding-sessions.ts";
import { organizations } from "../../platform/db/schema/organizations.ts";
import { nextAction } from "./schemas.ts";
import { hashSessionToken } from "./sessions.ts";

/** Addresses are stored lowercase so a checksummed and a plain spelling are one wallet. */
export const payerOf = (payment: { payer: string; network: string }): Payer => {
  const wallet: Wallet = { address: payment.payer.toLowerCase(), network: payment.network };
  return { type: "wallet", id: wallet.address, wallet };
};

/**
 * The actor of a paid call: the payer acting for its wallet organisation, whose first environment
 * is the default. No organisation: `signup_required`, a refusal, so the payment is not taken.
 */
export async function resolveWalletActor(deps: Deps, payer: Payer): Promise<WalletActor> {
  const org = await findWalletOrganization(deps.db, payer.wallet);
  if (!org?.environmentId) {
    throw new AppError(
      "signup_required",
      "This wallet has no organisation yet; sign up first. Nothing was charged.",
      {
        next_actions: [
          nextAction(deps, "POST /x402/signup", "signup", {
            action: "sign_up",
            description:
              "Create a wallet-backed organisation with a first environment and a publishable telemetry key.",
            body: {},
          }),
        ],
      },
    );
  }
  return {
    ...payer,
    organizationId: org.id,
    environmentId: org.environmentId,
    permissions: walletPermissions,
  };
}

/** The wallet's organisation, if it signed up, and that organisation's first environment. */
export async function findWalletOrganization(db: Db, wallet: Wallet) {
  const [row] = await db
    .select({ id: organizations.id, environmentId: environments.id })
    .from(organizations)
    .leftJoin(environments, eq(environments.organizationId, organizations.id))
    .where(
      and(
        eq(organizations.kind, "wallet"),
        eq(organizations.walletNetwork, wallet.network),
        eq(organizations.walletAddress, wallet.address),
      ),
    )
    .orderBy(asc(environments.createdAt), asc(environments.id))
    .limit(1);
  return row;
}

/**
 * The actor of a free polling route (spec 4D rule 1): the session whose token is presented. An
 * expired session may still read its own state and nothing else (`sessionPermissions`).
 */
export async function resolveSessionActor(
  deps: Deps,
  authorization: string | undefined,
): Promise<SessionActor> {
  const token = /^Bearer\s+(\S+)$/i.exec(authorization ?? "")?.[1];
  if (!token) {
    throw new AppError(
      "unauthorized",
      "Send the session token from POST /x402/onboard as `Authorization: Bearer <token>`.",
    );
  }
  const [row] = await deps.db
    .select({
      id: onboardingSessions.id,
      organizationId: onboardingSessions.organizationId,
      expiresAt: onboardingSessions.expiresAt,
    })
    .from(onboardingSessions)
    .where(eq(onboardingSessions.tokenHash, hashSessionToken(token)));
  if (!row) throw staleSessionToken();
  const expired = row.expiresAt.getTime() <= deps.clock().getTime();
  const { id, organizationId } = row;
  return {
    type: "onboarding_session",
    id,
    organizationId,
    expired,
    permissions: sessionPermissions(expired),
  };
}
