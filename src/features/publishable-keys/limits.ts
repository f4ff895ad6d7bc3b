/** Live (unrevoked) keys per environment: enough to rotate per app, few enough to audit. */
export const MAX_ACTIVE_PUBLISHABLE_KEYS = 20;
