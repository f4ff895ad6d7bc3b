import type { Octokit } from "@octokit/core";
import { AppError } from "../../../errors.ts";

const PER_PAGE = 100;
/** Pages of the user's installations read at most; a user with more is refused (fails closed). */
const MAX_PAGES = 10;

/** An installation as the installing user sees it: its account and when it was made. */
export type UserInstallation = { account: string; createdAt: string };

/**
 * The installation as seen by the GitHub user behind a web-flow `code`, or undefined when that
 * user cannot access it: the code becomes a user access token (`signIn`), and the installation
 * must be among `GET /user/installations` for that token — GitHub's documented check, since the
 * callback's `installation_id` is whatever its caller wrote. Throws `invalid_request` for an
 * incorrect or expired code.
 */
export async function installationOfUser(
  signIn: (code: string) => Promise<Octokit>,
  args: { code: string; installationId: number },
): Promise<UserInstallation | undefined> {
  let user: Octokit;
  try {
    user = await signIn(args.code);
  } catch (error) {
    throw exchangeFailure(error);
  }
  for (let page = 1; page <= MAX_PAGES; page++) {
    const { data } = await user.request("GET /user/installations", { per_page: PER_PAGE, page });
    const found = data.installations.find((i) => i.id === args.installationId);
    if (found) {
      const account =
        found.account && "login" in found.account ? found.account.login : (found.account?.name ?? "");
      return { account, createdAt: found.created_at };
    }
    if (page * PER_PAGE >= data.total_count) return undefined;
  }
  return undefined;
}

/**
 * GitHub refuses an exchange with 200 and an `error` field, which @octokit/oauth-methods throws.
 * The thrown error holds the request body (client secret and code), so it never travels further,
 * not even as a `cause` the error log would print.
 */
function exchangeFailure(error: unknown): Error {
  const refusal = (error as { response?: { data?: { error?: unknown } } } | undefined)?.response?.data?.error;
  if (refusal === "bad_verification_code") {
    return new AppError(
      "invalid_request",
      "GitHub says this authorization code is incorrect or expired (a code works once, for ten minutes); install or authorise the App again through a fresh link.",
    );
  }
  if (refusal === "incorrect_client_credentials" || refusal === "redirect_uri_mismatch") {
    return new AppError(
      "provider_unavailable",
      "GitHub refused the App's OAuth client; the operator should check PATCHBAY_GITHUB_CLIENT_ID, PATCHBAY_GITHUB_CLIENT_SECRET and the App's callback URL.",
    );
  }
  const status = (error as { status?: unknown } | undefined)?.status;
  const reason =
    typeof refusal === "string" ? refusal : typeof status === "number" ? `HTTP ${status}` : "no answer";
  return new Error(`GitHub's OAuth code exchange failed (${reason}).`);
}
