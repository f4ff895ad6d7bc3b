// The public entry of features/oauth: all that other business areas may use of it (the
// features-meet-at-their-entry rule of .dependency-cruiser.cjs). Transports import its files directly.
export { revokeMemberGrants } from "./revoke-member-grants.ts";
