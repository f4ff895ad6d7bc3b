import type { Role } from "../../platform/db/schema/users.ts";

export type Member = {
  userId: string;
  email: string;
  displayName: string | null;
  role: Role;
  joinedAt: string;
};

export type Invitation = {
  id: string;
  email: string;
  role: Role;
  invitedBy: string;
  createdAt: string;
  expiresAt: string;
};
