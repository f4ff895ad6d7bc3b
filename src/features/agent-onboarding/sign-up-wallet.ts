import { asc, eq } from "drizzle-orm";
import { withTransaction } from "../../context.ts";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { newId, newUuid } from "../../ids.ts";
import type { Db } from "../../platform/db/client.ts";
import { isUniqueViolation } from "../../platform/db/errors.ts";
import { auditLog } from "../../platform/db/schema/audit-log.ts";
import { environments } from "../../platform/db/schema/environments.ts";
import { organizations } from "../../platform/db/schema/organizations.ts";
import { publishableKeys } from "../../platform/db/schema/publishable-keys.ts";
import { generatePublishableKey, newPublishableKeyId } from "../publishable-keys/key-value.ts";
import { organizationActions, sendTelemetryAction, startOnboardingAction } from "./next-actions.ts";
import type { SignupInput, SignupResult } from "./schemas.ts";
import { findWalletOrganization, type Wallet } from "./wallet.ts";

/**
 * Creates the wallet-backed organisation of a verified payer (spec 1B step 2): the
 * organisation, its first environment and a publishable key for telemetry. One organisation
 * per wallet: a second signup is `already_signed_up` (so the gate charges nothing) with the
 * next actions of the existing organisation.
 */
export async function signUpWallet(args: {
  deps: Deps;
  wallet: Wallet;
  input: SignupInput;
  requestId: string;
}): Promise<SignupResult> {
  const { deps, wallet, input } = args;
  const existing = await findWalletOrganization(deps.db, wallet);
  if (existing) throw await alreadySignedUp(deps, existing.id);
  const key = generatePublishableKey();
  const organizationId = newId("org");
  const environmentId = newUuid();
  const environmentName = input.environmentName ?? "production";
  const organizationName = input.organizationName ?? `Wallet ${wallet.address}`;
  const keyId = newPublishableKeyId();
  try {
    await withTransaction(deps.db, async (tx) => {
      await tx.insert(organizations).values({
        id: organizationId,
        name: organizationName,
        kind: "wallet",
        walletAddress: wallet.address,
        walletNetwork: wallet.network,
      });
      await tx.insert(environments).values({ id: environmentId, organizationId, name: environmentName });
      await tx.insert(publishableKeys).values({
        id: keyId,
        organizationId,
        environmentId,
        name: "Signup key",
        prefix: key.prefix,
        keyHash: key.hash,
        createdBy: `wallet:${wallet.address}`,
      });
      await tx.insert(auditLog).values({
        organizationId,
        actorType: "wallet",
        actorId: wallet.address,
        action: "organization.signed_up",
        targetType: "organization",
        targetId: organizationId,
        requestId: args.requestId,
        details: { network: wallet.network, environmentId, publishableKeyId: keyId },
      });
    });
  } catch (error) {
    // Two first signups of one wallet raced: the unique (network, address) index let one win.
    if (!isUniqueViolation(error)) throw error;
    const winner = await findWalletOrganization(deps.db, wallet);
    if (!winner) throw error;
    throw await alreadySignedUp(deps, winner.id);
  }
  const endpoint = deps.config.baseUrl;
  return {
    organization: { id: organizationId, name: organizationName, wallet },
    environment: { id: environmentId, name: environmentName },
    publishableKey: { id: keyId, key: key.key },
    telemetry: {
      endpoint,
      protocol: "http/protobuf",
      headers: { authorization: `Bearer ${key.key}` },
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${key.key}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      },
    },
    next_actions: [
      await startOnboardingAction(deps, organizationId, environmentId),
      sendTelemetryAction(deps),
    ],
  };
}

async function alreadySignedUp(deps: Deps, organizationId: string): Promise<AppError> {
  const environmentId = await firstEnvironmentId(deps.db, organizationId);
  return new AppError(
    "already_signed_up",
    "This wallet already has an organisation; nothing was charged. Follow next_actions.",
    {
      organizationId,
      next_actions: environmentId
        ? await organizationActions(deps, { id: organizationId, environmentId })
        : [],
    },
  );
}

export async function firstEnvironmentId(db: Db, organizationId: string): Promise<string | undefined> {
  const [row] = await db
    .select({ id: environments.id })
    .from(environments)
    .where(eq(environments.organizationId, organizationId))
    .orderBy(asc(environments.createdAt), asc(environments.id))
    .limit(1);
  return row?.id;
}
